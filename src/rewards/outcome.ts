// Outcome rewards: one task score per episode given to every selected record (shared), divided
// among them (split), or given to the last one only (MARFT). They never compute the score themselves.

import type { Trajectory } from "../workflow/trajectory.js";
import { selectRecords } from "./select.js";
import type { NamedReward, RecordSelection } from "./types.js";

/** Computes an episode's score (e.g. answer F1, pass rate) from its trajectory and task. */
export type EpisodeScore<T, S> = (trajectory: Trajectory<S>, task: T) => number;

export interface OutcomeOptions extends RecordSelection {
  name?: string;
}

/**
 * Shared outcome: every selected record gets the full score ("global correctness").
 *
 * @example
 * const shared = sharedOutcome<QaTask, QaState>((t, task) => f1(t.finalState.answer, task.gold));
 */
export function sharedOutcome<T = unknown, S = unknown>(score: EpisodeScore<T, S>, options: OutcomeOptions = {}): NamedReward<T, S> {
  return {
    name: options.name ?? "shared-outcome",
    fn: (traj, task) => {
      const value = score(traj, task);
      return selectRecords(traj as Trajectory<unknown>, options).map((r) => ({ recordIndex: r.index, kind: "trajectory" as const, value }));
    },
  };
}

export interface SplitOutcomeOptions extends OutcomeOptions {
  /** Relative share per role (default equal shares per record); records of unlisted roles get 0. */
  weights?: Readonly<Record<string, number>>;
}

/**
 * Split outcome: the score is divided among the selected records (equally, or by role weight),
 * so the rewards of one episode sum to the score.
 *
 * @example
 * const split = splitOutcome(score, { weights: { decompose: 1, answer: 3 } });
 */
export function splitOutcome<T = unknown, S = unknown>(score: EpisodeScore<T, S>, options: SplitOutcomeOptions = {}): NamedReward<T, S> {
  return {
    name: options.name ?? "split-outcome",
    fn: (traj, task) => {
      const value = score(traj, task);
      const records = selectRecords(traj as Trajectory<unknown>, options);
      const weightOf = (role: string | null): number => (options.weights ? (options.weights[role ?? ""] ?? 0) : 1);
      const total = records.reduce((a, r) => a + weightOf(r.role), 0);
      return records.map((r) => ({
        recordIndex: r.index,
        kind: "trajectory" as const,
        value: total > 0 ? (value * weightOf(r.role)) / total : 0,
      }));
    },
  };
}

/**
 * Final-agent outcome (MARFT): the last selected record gets the score, the others 0; credit
 * flows back through the agent chain by GAE.
 *
 * @example
 * const lastAgent = finalOutcome<MathTask, MathState>((t, task) => (t.finalState.answer === task.answer ? 1 : 0));
 */
export function finalOutcome<T = unknown, S = unknown>(score: EpisodeScore<T, S>, options: OutcomeOptions = {}): NamedReward<T, S> {
  return {
    name: options.name ?? "final-outcome",
    fn: (traj, task) => {
      const value = score(traj, task);
      const records = selectRecords(traj as Trajectory<unknown>, options);
      return records.map((r, i) => ({ recordIndex: r.index, kind: "trajectory" as const, value: i === records.length - 1 ? value : 0 }));
    },
  };
}
