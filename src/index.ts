// maso's public API for workflow authors: the workflow DSL, rewards, casts and configuration, and
// running a training. Every export is listed here explicitly. The rest of the library is in subpath
// tiers (src/entry/: `maso/engine`, `maso/rl`, `maso/runtime`, `maso/gateway`, `maso/distributed`,
// `maso/envs`, `maso/testing`; docs/architecture.md, "Public API"); the CLI is a separate entry point.
export { ERROR_CODES, type ErrorCode } from "./error-codes.js";
export { MasoError } from "./errors.js";

// workflows: roles, graphs, tools, parsers, state, episodes, trajectories
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
  tagsParser,
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
  type TagsParserOptions,
} from "./workflow/index.js";
// what a role's prompt builder returns (the engine's type, the same in `maso/engine`)
export type { ChatMessage } from "./engine/tokenizer/types.js";

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

// casts and configuration
export {
  defineCast,
  rolesOf,
  shareAll,
  byGroup,
  adapterPerRole,
  type Cast,
  type CastSpec,
  type CastTarget,
  type CastEntry,
} from "./runtime/index.js";
export {
  resolveRunConfig,
  runConfigIssues,
  loadRunConfig,
  resolveCast,
  MODEL_PRESETS,
  presetConfig,
  defineConfig,
  runConfigJsonSchema,
  type RunConfig,
  type RunConfigInput,
  type ConfigIssue,
} from "./config/index.js";

// running a training: the runtime in code, or the run `maso train` drives
export {
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  type ModelSpec,
  type ModelSource,
  type TrainMode,
  type AdvantageChoice,
  type UpdateOrder,
  type StepReport,
} from "./runtime/index.js";
export { type AsyncMode, runTraining, type TrainRunOptions, type TrainRunResult } from "./run/rl-run.js";
export { defineWorkflowModule, type WorkflowModule, type WorkflowModuleInput, type WorkflowTasks } from "./run/workflow-module.js";
