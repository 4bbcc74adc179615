// The RL algorithm layer's public surface: advantage estimators and per-token losses, listed explicitly.
// src/index.ts re-exports from here. Estimators and losses are plain arithmetic on arrays; only rl/update
// (the PPO update of one model) imports the engine. Nothing in rl/ imports the runtime or the workflow layer.

export type {
  AdvantageInput,
  AdvantageOutput,
  Estimator,
  EstimatorOptions,
  GaeContinuation,
  GroupField,
  NormalizeScope,
  SampleMeta,
} from "./advantages/types.js";
export { type EstimatorName, estimators, getEstimator } from "./advantages/registry.js";
export { gaeAction } from "./advantages/gae-action.js";
export { gaeToken } from "./advantages/gae-token.js";
export { gaeChain } from "./advantages/gae-chain.js";
export { drGrpo, groupKey, grpo, rloo } from "./advantages/group-baseline.js";
export { reinforcePP } from "./advantages/reinforce-pp.js";
export { scopeKey, type Whitening, whitenByScope } from "./advantages/whiten.js";
export {
  accumulateHappoFactors,
  actionLogRatios,
  applyHappoFactors,
  type HappoKey,
  type HappoOptions,
  happoKey,
  sampleHappoFactors,
} from "./advantages/happo.js";
export { type AggregationMode, type AggregationOptions, aggregationWeights } from "./losses/aggregate.js";
export { type PpoClipInput, type PpoClipOptions, type PpoMetrics, ppoClipLoss } from "./losses/ppo-clip.js";
export { type PpoActionInput, type PpoActionOptions, ppoActionLoss } from "./losses/ppo-action.js";
export { type KlPenaltyInput, type KlPenaltyOptions, klPenaltyLoss } from "./losses/kl-penalty.js";
export { type EntropyInput, type EntropyOptions, entropyBonus } from "./losses/entropy-bonus.js";
export { type ValueLossInput, type ValueLossOptions, type ValueMetrics, valueLoss } from "./losses/value-loss.js";
export { approxKlGuard, type KlGuardEstimator } from "./losses/kl-guard.js";
export { clipGradNorm, gradNorm } from "./losses/grad-clip.js";
export { sumLosses } from "./losses/sum-losses.js";
export { type KlEstimator, klTerm } from "./kl-estimators.js";
export type { LossGrads, LossResult, Numbers, TokenLayout } from "./types.js";
