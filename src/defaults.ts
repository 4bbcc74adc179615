// The one table of defaults that both the library (resolveTrainerConfig, createRuntime, defineRole,
// runEpisodes, the gateway) and the run config's schema (`maso train`, src/config/run-config.ts)
// read, so a library user and a config user get the same run. Values only: it imports nothing,
// and every floor may import it (docs/architecture.md). test/config/defaults.test.ts compares both.

/**
 * PPO and its optimiser: `algorithm.*` and `models.<m>.optimizer.*` in the run config,
 * `TrainerConfig` in the library. Fields marked "library only" have no config field.
 */
export const TRAINER_DEFAULTS = {
  epochs: 1,
  /** samples per optimiser step */
  minibatchSize: 16,
  /** PPO on each token (false) or on the whole action (MARFT's action level) */
  actionLevel: false,
  lengthNormalize: false,
  /** ratio clip [1 - clipLow, 1 + clipHigh]: DAPO's asymmetric range */
  clipLow: 0.2,
  clipHigh: 0.28,
  aggregation: "token-mean",
  klCoef: 0,
  klEstimator: "k3",
  /** library only: the config derives it from the estimator (REINFORCE++ shapes the reward) */
  klPlacement: "loss",
  entropyCoef: 0,
  oldLogProbs: "recompute",
  /** asynchronous RL: cap of the truncated importance weight on each token of a stale sample */
  importanceCap: 2,
  valueCoef: 0.5,
  valueClip: 0.2,
  /** library only */
  valueHuber: 10,
  /** library only */
  valueLevel: "action",
  activationBudgetMb: 1024,
  lr: 1e-5,
  weightDecay: 0,
  maxGradNorm: 1,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  seed: 0,
} as const;

/** Episodes: `schedule.concurrency`, `eval.concurrency` and `schedule.episodeTimeoutMs`; createRuntime's options. */
export const EPISODE_DEFAULTS = {
  /** episodes of a training step in flight at once */
  concurrency: 32,
  /** evaluation episodes in flight at once: a wider decode batch runs faster and trains nothing */
  evalConcurrency: 64,
  /** deadline of one episode (ms): generous, it only catches hangs */
  timeoutMs: 600_000,
} as const;

/**
 * New tokens one model call may generate when nothing lower is set. Two meanings, so two entries:
 * a role is written for its workflow and declares what its output needs (its own `maxNewTokens`);
 * an agent's call (agent nodes, the gateway) comes from an SDK that sends a limit of its own or
 * none, so it is bounded only by the largest a config may set and by the model's context.
 */
export const NEW_TOKEN_DEFAULTS = {
  /** a role whose defineRole sets no maxNewTokens, and an engine generation request */
  role: 256,
  /** an agent's call that sets no limit; also the largest `sampling.maxNewTokens` a config may set */
  agentCall: 1_000_000,
} as const;
