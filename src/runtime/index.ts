// The runtime's public surface: models and casts, worker groups, transport, controller and the
// naive generator, listed explicitly for src/index.ts to re-export.
export { resolveModelSpec, loadModel, type ModelSource, type ModelSpec, type ResolvedModelSpec } from "./worker-group/models.js";
export {
  adapterPerRole,
  byGroup,
  rolesOf,
  shareAll,
  type CastEntry,
  type CastMap,
  type CastModel,
  type CastSpec,
  type CastTarget,
  type TrainMode,
} from "./protocol/cast-map.js";
export { defineCast, type Cast } from "./cast.js";
export type { Generator, GeneratorRequest, GeneratorResult } from "./worker-group/generator.js";
export { createNaiveGenerator, type NaiveGeneratorOptions } from "./worker-group/naive-generator.js";
export { createSamplerGenerator } from "./worker-group/sampler-generator.js";
export type {
  AdvantageStats,
  AgentChainPiece,
  AgentChainsRequest,
  AgentChainsResponse,
  AssignRewardsRequest,
  AssignRewardsResponse,
  ComputeAdvantagesRequest,
  ComputeAdvantagesResponse,
  DiagnosticsRequest,
  DiagnosticsResponse,
  DiscardRequest,
  GeneratorStats,
  GenerateRequest,
  GenerateResponse,
  LogRatio,
  RequestOf,
  ResponseOf,
  RewardItem,
  LogprobsRequest,
  LogprobsResponse,
  UpdateRequest,
  UpdateResponse,
  WorkerGroupApi,
  WorkerOp,
  WorkerState,
} from "./protocol/messages.js";
export { inProcessTransport, type TrafficStats, type Transport } from "./protocol/transport.js";
export { createWorkerGroup, type WorkerGroup, type WorkerGroupOptions } from "./worker-group/worker-group.js";
export { routingCaller, seedOf } from "./controller/role-router.js";
export type { AdvantageChoice, ControllerOptions, StepItem, UpdateOrder } from "./controller/step-context.js";
export { roleMetrics, type RoleStepMetrics } from "./controller/step-metrics.js";
export {
  createController,
  failedStepTrajectories,
  type Controller,
  type StepReport,
  type WorkerStepStats,
} from "./controller/controller.js";
export { ownedRecords, sampleLedger, type OwnedSample, type SampleLedger } from "./controller/sample-ledger.js";
export { createRuntime, type Runtime, type RuntimeOptions } from "./runtime.js";
