// `maso/rl`: the RL algorithms as plain functions — the built-in advantage estimators, the
// per-token losses, and the PPO-style update of one model. A run picks an estimator by its
// built-in name in the config (`algorithm.estimator`); there is no registration of new ones.
export {
  estimators,
  getEstimator,
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
} from "../rl/index.js";
export {
  resolveTrainerConfig,
  DEFAULT_TRAINER,
  ppoUpdate,
  type TrainerOptions,
  type TrainerConfig,
  type UpdateReport,
} from "../rl/update/index.js";
