// The reward contract: a reward function reads a trajectory and its task and returns, per record,
// a reward (scalar or per token) with its kind, or an explicit skip. Types only.

import type { StepRecord, Trajectory } from "../workflow/trajectory.js";

/**
 * What a reward term measures; used for the per-kind breakdown in logs. "judge" is a judge model's
 * score, "model" a reward model's (model-rules.ts).
 */
export type RewardKind = "format" | "node" | "turn" | "trajectory" | "judge" | "model";

export const REWARD_KINDS: readonly RewardKind[] = ["format", "node", "turn", "trajectory", "judge", "model"];

/** A reward for one record: a scalar, or one value per output token. */
export interface RewardAssignment {
  recordIndex: number;
  value: number | number[];
  kind: RewardKind;
}

/** An explicit "no reward for this record from this function", with a reason for logs. */
export interface RewardSkip {
  recordIndex: number;
  skip: true;
  reason: string;
}

export type RewardEntry = RewardAssignment | RewardSkip;

/** Turns one trajectory and its task into reward entries (at most one per record). */
export type RewardFn<T = unknown, S = unknown> = (trajectory: Trajectory<S>, task: T) => readonly RewardEntry[];

/** A reward function with a name for logs and error messages. */
export interface NamedReward<T = unknown, S = unknown> {
  name: string;
  fn: RewardFn<T, S>;
}

/** Which records a helper rewards (always only trainable ones: role records with a sample). */
export interface RecordSelection {
  /** Only records of these roles. */
  roles?: readonly string[];
  /** Only records of these nodes. */
  nodes?: readonly string[];
  /** Any further condition. */
  where?: (record: StepRecord) => boolean;
}

/** Is this entry a skip? */
export function isSkip(entry: RewardEntry): entry is RewardSkip {
  return (entry as RewardSkip).skip === true;
}
