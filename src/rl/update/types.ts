// Data shapes of the in-worker update: one cached sample as the trainer sees it, the trainer's
// settings, and the per-role report. Types only; nothing here leaves the worker group except reports.
import type { AggregationMode } from "../losses/aggregate.js";
import type { KlEstimator } from "../kl-estimators.js";

/**
 * One rollout sample ready for training. Per-token arrays cover the R response tokens
 * (tokens[promptLen..]) only. Lives in the worker group's cache; never serialised.
 */
export interface TrainSample {
  id: number;
  role: string;
  episode: string;
  adapter: string | null;
  /** Sampling temperature; forwards divide logits by it (1 when sampled greedily). */
  temperature: number;
  tokens: Int32Array;
  promptLen: number;
  /** (R) log-probs of the sampling policy, recomputed by the training forward at rollout time. */
  oldLogp: Float32Array;
  /** (R) log-probs of the frozen reference, or null when the model has none. */
  refLogp: Float32Array | null;
  /** (R) critic values at rollout time, or null without a critic. */
  oldValues: Float32Array | null;
  /** (R) advantages (whitened) and critic targets. */
  advantages: Float32Array;
  returns: Float32Array;
  /** HAPPO factor for this sample's episode (1 when not using HAPPO). */
  happoFactor: number;
}

/** KL to the reference policy. */
export interface KlSettings {
  /** β; 0 turns the term off (the KL metric is still reported). */
  coef: number;
  estimator: KlEstimator;
  /** "loss": β·KL in the loss (GRPO style); "reward": −β·KL folded into token rewards before advantages. */
  placement: "loss" | "reward";
  clamp?: number;
}

/** Settings of one worker group's PPO-style update. */
export interface TrainerConfig {
  /** Passes over the samples per update (PPO epochs). */
  epochs: number;
  /** Samples per minibatch (one optimiser step each); 0 = all samples in one minibatch. */
  minibatchSize: number;
  /** "token": per-token ratios; "action": MARFT's one ratio per action. */
  policyLoss: "token" | "action";
  /** Action-level loss: mean instead of sum of token log-probs. */
  lengthNormalize: boolean;
  clipLow: number;
  clipHigh: number;
  dualClip?: number;
  aggregation: AggregationMode;
  /** Divisor of the token-sum-norm aggregation (Dr.GRPO: the generation budget). */
  normConst?: number;
  kl: KlSettings;
  /** Entropy bonus coefficient (0 = off; entropy is still reported). */
  entropyCoef: number;
  /** Critic loss settings (used when the model has a value head). */
  value: { coef: number; clip?: number; huber?: number; level: "token" | "action" };
  /**
   * Where a sample's old (behaviour) log-probs come from. "recompute" (the default): a scoring
   * forward, whose numbers do not depend on how the rollout batched its decode steps, so a run is
   * the same at any concurrency, replica count or resume point. "rollout": the sampler's own,
   * recorded while it generated (its decode step is the training forward op for op: ~1e-6 apart in
   * fp32, up to ~3e-2 in bf16), and the scoring forward is skipped; samples that need values, came
   * from another replica or outlived a weight change are still scored.
   */
  oldLogProbs: "rollout" | "recompute";
  /** Skip a minibatch whose approximate KL (k3) to the sampling policy exceeds this. */
  approxKlSkip?: number;
  /** Global gradient-norm clip over the parameters a minibatch trains. */
  maxGradNorm?: number;
  /**
   * Memory (MiB) one chunk of an update may hold for its backward: its saved activations and kept
   * LM-head logits. A minibatch that needs more is cut at sequence boundaries into chunks that fit.
   */
  activationBudgetMb: number;
  lr: number;
  /** Learning rate of the value head (default lr). */
  criticLr?: number;
  weightDecay: number;
  betas: [number, number];
  /** AdamW epsilon (default 1e-8). */
  eps?: number;
  /**
   * Learning-rate schedule over RL steps (the `step` of each update request): lr (and criticLr)
   * times lrAt(schedule with peak 1, step). Default: constant.
   */
  lrSchedule?: { kind: "constant" | "cosine"; warmupSteps: number; totalSteps?: number };
  /** Seeds minibatch shuffling. */
  seed: number;
}

/** Per-role figures of one update (means over the minibatches that ran). */
export interface RoleUpdateMetrics {
  samples: number;
  responseLength: number;
  entropy: number;
  /** Mean per-token k3 KL of the current policy to the reference (NaN without a reference). */
  klRef: number;
  pgLoss: number;
  clipFrac: number;
  approxKl: number;
  /** Norm of this role's contribution to the gradient, before clipping. */
  gradNorm: number;
  valueLoss: number;
  explainedVariance: number;
  minibatches: number;
  skippedMinibatches: number;
}

export interface UpdateReport {
  roles: Record<string, RoleUpdateMetrics>;
  /** Optimiser steps taken. */
  steps: number;
  /** Global pre-clip gradient norm, mean over steps. */
  gradNorm: number;
  ms: number;
}
