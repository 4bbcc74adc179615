// The one interface every advantage estimator implements, and the sample metadata it reads.
// Types only; estimators live in their own files and are collected in registry.ts.

import type { Numbers, TokenLayout } from "../types.js";

/** Where a chain continues after its last element; both 0 for a terminal end. */
export interface GaeContinuation {
  /** V of the element after the chain (next agent's observation, or next agent's first token). */
  nextValue: number;
  /** GAE advantage already computed for that next element. */
  nextAdvantage: number;
}

/** What an estimator needs to know about one record (one role call) besides its tokens. */
export interface SampleMeta {
  /** Episode id; GAE chains and HAPPO factors follow the records of one episode in batch order. */
  episode: string;
  role: string;
  model: string;
  /**
   * The sample's group key: a group baseline (GRPO, RLOO, Dr.GRPO) compares it with the samples of
   * its group (`groupBy: ["task", …]` reads this field). The runtime puts the task's key here.
   */
  group: string;
  turn: number;
  /** Scalar reward of the record, credited to its last response token. */
  reward: number;
  /** Action-level critic value V(observation of this record); required by `gae-action`. */
  value?: number;
  /** Read on an episode's last record only: true (default) = terminal, false = cut off, bootstrap from `bootstrapValue`. */
  done?: boolean;
  /** V of the state after an episode's last record when `done` is false. */
  bootstrapValue?: number;
}

/**
 * A batch for advantage estimation, in the packed layout (see {@link TokenLayout}).
 * `samples[s]` describes sequence s; the records of one episode appear in trajectory (agent) order.
 */
export interface AdvantageInput extends TokenLayout {
  samples: readonly SampleMeta[];
  /** Per-token critic values; required by `gae-token`. */
  values?: Numbers;
  /** Per-token rewards added to the scalar rewards (per-token reward kinds, and −β·KL when the trainer puts KL in the reward). */
  tokenRewards?: Numbers;
}

/**
 * Which samples are whitened together. `role` (default) keeps roles that share a model apart;
 * `role-turn` splits further by turn; `none` leaves advantages as computed.
 */
export type NormalizeScope = "role" | "role-turn" | "model" | "global" | "none";

/** Sample fields a group key can be built from. */
export type GroupField = "task" | "role" | "turn" | "model";

/** Options shared by all estimators; each reads only the ones it documents. */
export interface EstimatorOptions {
  /** Discount. GAE default 0.99, REINFORCE++ default 1. */
  gamma?: number;
  /** GAE λ, default 0.95. */
  lambda?: number;
  /** Whitening scope after estimation. GAE and REINFORCE++ default `role`; group estimators default `none`. */
  normalize?: NormalizeScope;
  /** Group key for GRPO/RLOO/Dr.GRPO, default ["task", "role", "turn"]. */
  groupBy?: readonly GroupField[];
  /** Added to the std in GRPO (default 1e-6) and to the variance in whitening (default 1e-8). */
  eps?: number;
}

/** Per-token advantages and returns (0 on masked-out tokens), plus metrics. */
export interface AdvantageOutput {
  advantages: Float32Array;
  /** Targets for a critic: advantages + values for GAE (before whitening); the raw returns otherwise. */
  returns: Float32Array;
  /** One advantage per sequence, for estimators whose advantage is constant over a record (action-level losses). */
  sampleAdvantages?: Float32Array;
  metrics: Record<string, number>;
}

/** One record of a piece of an agent chain: its critic values and rewards, one per response token. */
export interface ChainSample {
  values: ArrayLike<number>;
  rewards: Float64Array;
}

/** Raw (unwhitened) advantages and returns of a piece's records, per response token, and the piece's head. */
export interface ChainPiece {
  advantages: Float32Array[];
  returns: Float32Array[];
  /** V and A of the piece's first element: the `next` of the piece before it. */
  head: GaeContinuation;
}

/**
 * How an estimator whose advantages chain across the agents of an episode runs when the agents'
 * records live in different places (worker groups): each place runs `piece` over its run of the
 * chain, last run first, carrying two scalars between them; then each place `finish`es its own
 * raw advantages.
 */
export interface AgentChain {
  /** "action": one value and advantage per record; "token": one per response token. */
  readonly level: "action" | "token";
  piece(samples: readonly ChainSample[], options: EstimatorOptions, next: GaeContinuation): ChainPiece;
  /** The final advantages from the raw ones (whitening per `normalize`). */
  finish(raw: Float32Array, layout: TokenLayout, samples: readonly SampleMeta[], options: EstimatorOptions): Float32Array;
}

/** An advantage estimator: a pure function of the batch plus a name and what it needs. */
export interface Estimator {
  readonly name: string;
  readonly description: string;
  /** Inputs beyond layout, samples and rewards: per-token `values` or per-sample `value`. */
  readonly requires: readonly ("values" | "sampleValue")[];
  /** Needs a critic: the model must have a value head. */
  readonly critic: boolean;
  /** Set when advantages chain across the agents of an episode (GAE); the runtime then runs it piecewise. */
  readonly chain?: AgentChain;
  estimate(input: AdvantageInput, options?: EstimatorOptions): AdvantageOutput;
}
