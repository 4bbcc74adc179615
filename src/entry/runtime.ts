// `maso/runtime`: the parts `createRuntime` (in `maso`) assembles, for callers that wire their own
// — controller, worker groups, transport, generators, model loading — and the run directory's
// files: checkpoints, the effective config, metrics, rewards and role-call exports.
export {
  createController,
  createWorkerGroup,
  inProcessTransport,
  resolveModelSpec,
  loadModel,
  createNaiveGenerator,
  createSamplerGenerator,
  routingCaller,
  roleMetrics,
  type Generator,
  type GeneratorStats,
  type WorkerGroup,
  type Transport,
  type TrafficStats,
  type Controller,
  type ControllerOptions,
  type CastMap,
  type CastModel,
  type StepItem,
  type RoleStepMetrics,
} from "../runtime/index.js";

// run checkpoints
export {
  writeCheckpoint,
  findCheckpoint,
  verifyCheckpoint,
  restoreCheckpoint,
  listCheckpoints,
  decoderPart,
  adamwPart,
  jsonPart,
  type Checkpointable,
  type CheckpointManifest,
} from "../checkpoint/index.js";
export { workerGroupPart } from "../checkpoint/worker-group-part.js";

// the run directory: effective config, progress, metrics, rewards, role calls
export { writeEffectiveConfig } from "../config/index.js";
export {
  createProgress,
  openMetricsWriter,
  readMetrics,
  appendRewards,
  roleRows,
  type MetricsRow,
  type Progress,
  metricsCsv,
  openEventFile,
  roleCalls,
  type ChatExample,
  type RoleCall,
  type RoleCallFilter,
} from "../progress/index.js";
