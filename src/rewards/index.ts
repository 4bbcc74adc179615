// The reward layer's public surface, listed explicitly for src/index.ts to re-export.
// Test fixtures (test-trajectories) are not exported.

export { isSkip, REWARD_KINDS } from "./types.js";
export type { NamedReward, RecordSelection, RewardAssignment, RewardEntry, RewardFn, RewardKind, RewardSkip } from "./types.js";
export { selectRecords } from "./select.js";
export { formatReward } from "./format.js";
export type { FormatRewardOptions } from "./format.js";
export { finalOutcome, sharedOutcome, splitOutcome } from "./outcome.js";
export type { EpisodeScore, OutcomeOptions, SplitOutcomeOptions } from "./outcome.js";
export { marginalGain, perTurnScore } from "./turns.js";
export type { MarginalGainOptions, PerTurnScoreOptions, TurnMetric, TurnSeries } from "./turns.js";
export { assignRewards, combineRewards, trainableRecords } from "./combine.js";
export type {
  AssignedRewards,
  AssignOptions,
  CombinedReward,
  EpisodeRewards,
  RewardFailure,
  RewardInput,
  SkippedRecord,
  TrainableRecord,
} from "./combine.js";
export { judgeReward } from "./judge.js";
export type { JudgeOptions, JudgePromptInput } from "./judge.js";
export { fenceCandidate, parseScores } from "./judge-parse.js";
export type { JudgeParser } from "./judge-parse.js";
export { isModelRule, judgementsOf } from "./model-rules.js";
export type { ModelRewardItem, ModelRewardRule, ModelRuleStats, RewardServices } from "./model-rules.js";
export { judgedEntries, ruleStats } from "./judged-entries.js";
export type { JudgedEntryOptions, JudgeFailurePolicy } from "./judged-entries.js";
export { judgeClient } from "./judge-endpoint.js";
export { JUDGE_BODY_CAP } from "./judge-http.js";
export type { JudgeCall, JudgeClient, JudgeEndpoint } from "./judge-endpoint.js";
export { rewardModelReward } from "./reward-model.js";
export type { RewardModelRewardOptions } from "./reward-model.js";
