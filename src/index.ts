// maso's public API. Every export is listed here explicitly; the CLI is a separate entry point.
export { ERROR_CODES, type ErrorCode } from "./error-codes.js";
export { MasoError } from "./errors.js";
export { describeNative, defaultThreads } from "./native/binding.js";

// engine: model, parameters, optimiser
export type { Architecture, LoraConfig, LoraTarget, ModelConfig } from "./engine/config.js";
export { LORA_TARGETS } from "./engine/config.js";
export { ParamTable, modelParamSpecs, loraParamSpecs, type ParamSpec } from "./engine/params.js";
export {
  Decoder,
  type BackwardGrads,
  type DecoderOptions,
  type ForwardOptions,
  type ForwardResult,
  type Tape,
} from "./engine/model/decoder.js";
export type { SequenceInput } from "./engine/model/batch.js";
export type { Adapter } from "./engine/model/lora.js";
export type { ValueHead } from "./engine/model/value-head.js";
export { createKeyedRng, createRng, type KeyedRng, type Rng, type SeededRng } from "./rng.js";
export { fillNormal } from "./engine/model/init.js";
export {
  createAdamW,
  globalGradNorm,
  type AdamW,
  type AdamWConfig,
  type ParamGroup,
  type StepReport as OptimizerStepReport,
} from "./engine/optim/adamw.js";
export { lrAt, type LrSchedule } from "./engine/optim/schedule.js";
export { lmStep, meanNll, type LmStepOptions, type LmStepResult } from "./engine/lm-step.js";

// engine: checkpoints
export { loadHfModel, saveHfModel, type SaveHfOptions } from "./engine/io/hf-model.js";
export { loadAdapter, saveAdapter } from "./engine/io/peft.js";

// engine: tokenizers
export type { ChatMessage, ChatTemplateOptions, DecodeOptions, EncodeOptions, Tokenizer } from "./engine/tokenizer/types.js";
export { encodeChat } from "./engine/tokenizer/encode-chat.js";
export { hfTokenizerFromFiles, loadHfTokenizer, qwen3TokenizerDir, type HfTokenizer } from "./engine/tokenizer/hf-tokenizer.js";
export { BYTE_VOCAB_SIZE, createByteTokenizer, type ByteTokenizer } from "./engine/tokenizer/byte-tokenizer.js";
export { loadTokenizer, saveTokenizer, type SavableTokenizer } from "./engine/tokenizer/load-tokenizer.js";
export { checkTokenizerFits } from "./engine/tokenizer/tokenizer-fit.js";

// training loops
export { evalLoss, pretrain, tokenStream, type PretrainOptions, type PretrainStep } from "./run/pretrain.js";

// environments and task families
export {
  openRetriever,
  buildIndex,
  type Retriever,
  type RetrieverDoc,
  type SearchHit,
  runSubmission,
  verifyMany,
  formatFeedback,
  extractCode,
  type VerifyResult,
  checkMath,
  extractBoxed,
  exactMatch,
  f1Score,
  makeWorldTasks,
  findEntityLeaks,
  makeCodeTasks,
  CODE_TEMPLATES,
  EXPRESSION_TEMPLATES,
  LOOP_TEMPLATES,
  type CodeTemplate,
  makeArithmeticTasks,
  type QaTask,
  type CodeTask,
  type MathTask,
  type Splits,
  loadQaJsonl,
  loadCodeJsonl,
  loadMathJsonl,
  type CodeTest,
  type VerifierOptions,
  isEquivalentAnswer,
  contentHash,
  type SyntheticCodeTask,
  type SyntheticMathTask,
  type MathStep,
  type WorldTasks,
  documentsOf,
  generateWorld,
  type World,
  type WorldShape,
  type Entity,
  type Fact,
  FACT_PHRASINGS,
  QUESTION_TEMPLATES,
  type Relation,
  templateWords,
  createNameSource,
  wordSet,
  type NameSource,
} from "./envs/index.js";
export { normalizeMathAnswer, normalizeQaAnswer, cutSplits, type Split, type SplitFractions } from "./envs/index.js";

// RL algorithms
export {
  estimators,
  getEstimator,
  registerEstimator,
  gaeChain,
  whitenByScope,
  accumulateHappoFactors,
  actionLogRatios,
  applyHappoFactors,
  ppoClipLoss,
  ppoActionLoss,
  klPenaltyLoss,
  entropyBonus,
  valueLoss,
  sumLosses,
  approxKlGuard,
  clipGradNorm,
  type AdvantageInput,
  type AdvantageOutput,
  type Estimator,
  type EstimatorName,
  type SampleMeta,
  type LossResult,
} from "./rl/index.js";

// workflows: roles, graphs, trajectories
export {
  END,
  START,
  workflow,
  defineRole,
  parseRoleOutput,
  defineTool,
  callTool,
  safeParse,
  boxedParser,
  jsonStringListParser,
  searchOrEndParser,
  tagParser,
  textParser,
  dropOldest,
  truncateMessages,
  append,
  replace,
  runEpisodes,
  isFormatFailure,
  isTrainable,
  trajectoryToJson,
  trajectoryFromJson,
  appendTrajectories,
  readTrajectories,
  type Workflow,
  type WorkflowBuilder,
  type Role,
  type RoleSpec,
  type Parser,
  type ParseResult,
  type Tool,
  type ToolResult,
  type RoleCaller,
  type RoleCallRequest,
  type RoleCallResult,
  type OutputLogprob,
  type StepRecord,
  type Trajectory,
  type JudgeRecord,
  type SampleHandle,
  type RouteContext,
  type StateUpdate,
  MAX_PARSE_CHARS,
  type SearchAction,
} from "./workflow/index.js";
export { tagsParser, type TagsParserOptions } from "./workflow/index.js";

// rewards
export {
  REWARD_KINDS,
  formatReward,
  sharedOutcome,
  splitOutcome,
  finalOutcome,
  marginalGain,
  perTurnScore,
  assignRewards,
  combineRewards,
  type NamedReward,
  type RewardAssignment,
  type RewardFn,
  type RewardKind,
  type EpisodeRewards,
  type TurnMetric,
  judgeReward,
  parseScores,
  type JudgeOptions,
  type JudgePromptInput,
  type JudgeFailurePolicy,
  type ModelRewardRule,
  rewardModelReward,
  type RewardModelRewardOptions,
  isModelRule,
  judgementsOf,
  judgedEntries,
  type ModelRuleStats,
  type RewardServices,
} from "./rewards/index.js";

// checkpoints of trainable state beyond HF/PEFT files
export { loadOptimizerState, saveOptimizerState, loadValueHead, saveValueHead } from "./engine/io/training-state.js";

// generation: KV-cache continuous batching, and GGUF export
export {
  Sampler,
  sampleToken,
  samplingSupport,
  type SamplerOptions,
  type SamplerStats,
  type FinishReason,
  type GenerationRequest,
  type GenerationResult,
  type TopLogprob,
} from "./engine/generate/index.js";
export { writeGguf, type GgufExportOptions } from "./engine/io/gguf.js";

// runtime: models, casts, worker groups, controller
export {
  createRuntime,
  createController,
  createWorkerGroup,
  inProcessTransport,
  defineCast,
  rolesOf,
  shareAll,
  byGroup,
  adapterPerRole,
  resolveModelSpec,
  loadModel,
  createNaiveGenerator,
  createSamplerGenerator,
  routingCaller,
  roleMetrics,
  type ModelSpec,
  type ModelSource,
  type TrainMode,
  type Cast,
  type CastSpec,
  type CastTarget,
  type CastEntry,
  type Generator,
  type GeneratorStats,
  type WorkerGroup,
  type Transport,
  type TrafficStats,
  type Controller,
  type ControllerOptions,
  type StepItem,
  type StepReport,
  type RoleStepMetrics,
  type AdvantageChoice,
  type UpdateOrder,
  type Runtime,
  type RuntimeOptions,
} from "./runtime/index.js";
export {
  resolveTrainerConfig,
  DEFAULT_TRAINER,
  ppoUpdate,
  type TrainerOptions,
  type TrainerConfig,
  type UpdateReport,
} from "./rl/update/index.js";

// run checkpoints, configuration, progress and metrics
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
} from "./checkpoint/index.js";
export {
  resolveRunConfig,
  runConfigIssues,
  loadRunConfig,
  writeEffectiveConfig,
  resolveCast,
  MODEL_PRESETS,
  presetConfig,
  type RunConfig,
  type RunConfigInput,
  type ConfigIssue,
} from "./config/index.js";
export { defineConfig, runConfigJsonSchema } from "./config/index.js";
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
} from "./progress/index.js";

// RL training runs (what `maso train` drives), SFT, BPE tokenizer training
export { runTraining, type TrainRunOptions, type TrainRunResult } from "./run/rl-run.js";
export { defineWorkflowModule, type WorkflowModule, type WorkflowModuleInput, type WorkflowTasks } from "./run/workflow-module.js";
export { workerGroupPart } from "./checkpoint/worker-group-part.js";
export { sft, sftSequences, sftLoss, type SftExample, type SftOptions } from "./run/sft.js";
export { trainBpe, type BpeModel, type BpeTrainOptions } from "./engine/tokenizer/bpe-trainer.js";
export { saveBpeTokenizer, bpeTokenizerFiles } from "./engine/tokenizer/bpe-trainer-files.js";

// Worker groups in their own processes over NATS (docs/distributed.md)
export { createNatsRuntime, type NatsRuntimeOptions, type NatsSettings } from "./distributed/nats-runtime.js";
export { natsTransport, type NatsTransport } from "./distributed/nats-transport.js";
export { startNatsServer, type NatsServer } from "./distributed/nats-server.js";
export { runWorkerProcess } from "./distributed/worker-process.js";

// The gateway: train agents written with any OpenAI-compatible SDK (docs/gateway.md)
export {
  type AgentContext,
  type AgentFn,
  type AgentModule,
  type AgentResult,
  agentModule,
  agentReward,
  agentWorkflow,
  agentWorkflowExports,
  type AgentState,
  commandAgent,
  episodeRegistry,
  gatewayApp,
  type GatewayBackend,
  type GatewayCall,
  type GatewayCompletion,
  GatewayRefusal,
  type GatewayServer,
  parseReply,
  parseToolCalls,
  serveGateway,
} from "./gateway/index.js";
