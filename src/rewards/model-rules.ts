// Reward rules scored by a model (LLM judges, reward models). Reward functions are synchronous, so
// such a rule has two halves: `prepare` runs once per step over the whole batch, before any reward
// function, makes its model calls (batched by the worker groups, or sent to an endpoint) and writes
// what it found into each trajectory's `judgements`; `fn` then reads those back like any reward
// function. Data flows through the trajectory only, so trajectory files show what was judged.
import type { ChatMessage } from "../engine/tokenizer/types.js";
import { MasoError } from "../errors.js";
import type { CompleteRequest, CompleteResponse, RateRequest, RateResponse } from "./model-calls.js";
import type { JudgeRecord, Trajectory } from "../workflow/trajectory.js";
import type { NamedReward } from "./types.js";

/** The cast's models as the reward layer may use them: never trained, nothing kept. */
export interface RewardServices {
  /** Generates on a cast model's base weights without keeping a sample. */
  complete(model: string, req: CompleteRequest): Promise<CompleteResponse>;
  /** Scalar scores from a model with a reward head. */
  rate(model: string, req: RateRequest): Promise<RateResponse>;
  /** The run seed and the step, for seeds of sampled judge calls. */
  seed: number;
  step: number;
}

/** One episode of the batch, with the group (GRPO/RLOO key) it belongs to. */
export interface ModelRewardItem<T, S> {
  trajectory: Trajectory<S>;
  task: T;
  groupKey: string;
}

/** What a model-scored rule did in one step, for metrics.jsonl (`judges.<rule>`). */
export interface ModelRuleStats {
  calls: number;
  failures: number;
  cacheHits: number;
  /** Mean of the scores that parsed (NaN when none did). */
  meanScore: number;
  /** With a programmatic metric (`agreeWith`): share of judged items on the same side of the threshold. */
  agreement?: number;
  /** With a programmatic metric: Pearson correlation of score and metric (NaN when either is constant). */
  correlation?: number;
}

/** A reward rule whose scores come from a model. */
export interface ModelRewardRule<T = unknown, S = unknown> extends NamedReward<T, S> {
  /** Cast models it calls (they must be declared and frozen). */
  readonly models: readonly string[];
  /** Scores the batch and appends JudgeRecords to each trajectory's `judgements`. */
  prepare(batch: readonly ModelRewardItem<T, S>[], services: RewardServices): Promise<ModelRuleStats>;
}

/**
 * Is this reward function a model-scored rule?
 * @example
 * const judged = rewards.filter(isModelRule);
 */
export function isModelRule<T, S>(r: NamedReward<T, S>): r is ModelRewardRule<T, S> {
  return typeof (r as Partial<ModelRewardRule<T, S>>).prepare === "function";
}

/**
 * Is this a failure of the run's own machinery (the transport, a lost worker) rather than of the
 * scoring model? Such a failure stops the step like any other; only the rest become judge records.
 * @example
 * catch (err) { if (isInfrastructureError(err)) throw err; record(err) }
 */
export function isInfrastructureError(err: unknown): boolean {
  return err instanceof MasoError && /^(NATS_|WORKER_LOST|WORKER_OP|TRANSPORT_)/.test(err.code);
}

/**
 * A rule's programmatic metric of an episode (`agreeWith`), or null: no metric, not finite, or it threw.
 * @example
 * agreementMetric(o.agreeWith, trajectory, task); // 0.67, or null
 */
export function agreementMetric<T, S>(
  agreeWith: ((trajectory: Trajectory<S>, task: T) => number) | undefined,
  trajectory: Trajectory<S>,
  task: T,
): number | null {
  if (!agreeWith) return null;
  try {
    const m = agreeWith(trajectory, task);
    return Number.isFinite(m) ? m : null;
  } catch {
    return null;
  }
}

/**
 * The judge records of one rule in a trajectory.
 * @example
 * for (const j of judgementsOf(traj, "judge")) console.log(j.score);
 */
export function judgementsOf(trajectory: Trajectory<unknown>, rule: string): JudgeRecord[] {
  return (trajectory.judgements ?? []).filter((j) => j.rule === rule);
}

export type { ChatMessage, JudgeRecord };
