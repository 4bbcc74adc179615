// Per-turn rewards: a record at turn t gets the metric at t (perTurnScore) or the marginal gain
// m_t − m_{t−1} (marginalGain), with stop actions earning 0. The metric series comes from the caller.

import type { StepRecord, Trajectory } from "../workflow/trajectory.js";
import { selectRecords } from "./select.js";
import type { NamedReward, RecordSelection, RewardEntry } from "./types.js";

/** Metric per turn: series[t] = m_t (an array or a turn-keyed object); missing turns are allowed. */
export type TurnSeries = Readonly<Record<number, number>>;

export type TurnMetric<T, S> = (trajectory: Trajectory<S>, task: T) => TurnSeries;

const at = (series: TurnSeries, t: number): number | undefined => {
  const v = series[t];
  return typeof v === "number" ? v : undefined;
};

export interface PerTurnScoreOptions extends RecordSelection {
  name?: string;
}

/**
 * Per-turn score: a selected record at turn t gets m_t (kind "node"); a missing m_t is a skip.
 * M-ASK: plan (turn 0) gets F1 of its initial answer, answer at turn t gets F1(a_t).
 *
 * @example
 * perTurnScore<Task, State>((t, task) => t.finalState.answers.map((a) => f1(a, task.gold)), { roles: ["plan", "answer"] });
 */
export function perTurnScore<T = unknown, S = unknown>(series: TurnMetric<T, S>, options: PerTurnScoreOptions = {}): NamedReward<T, S> {
  return {
    name: options.name ?? "per-turn-score",
    fn: (traj, task) => {
      const m = series(traj, task);
      return selectRecords(traj as Trajectory<unknown>, options).map((r): RewardEntry => {
        const v = at(m, r.turn);
        return v === undefined
          ? { recordIndex: r.index, skip: true, reason: `no metric for turn ${r.turn}` }
          : { recordIndex: r.index, kind: "node", value: v };
      });
    },
  };
}

export interface MarginalGainOptions extends RecordSelection {
  name?: string;
  /** m_0, used when the series has no entry for turn 0 (default 0). */
  m0?: number;
  /**
   * Which turn's gain a record at turn t gets: m_{t+offset} − m_{t+offset−1}. 0 for actions that
   * cause turn t's result (plan, code); 1 for actions that shape the next turn (reflect).
   */
  offset?: number;
  /** Records that are a role's stop action (e.g. `<end>`) get 0. */
  isStop?: (record: StepRecord) => boolean;
}

/**
 * Per-turn marginal gain (kind "turn"): a selected record at turn t gets m_u − m_{u−1} with
 * u = t + offset. A stop action gets 0; a missing m_u or m_{u−1} is a skip (e.g. a reflect whose
 * next turn never ran).
 *
 * @example
 * // M-ASK: search, summarize and update at turn t share F1(a_t) − F1(a_{t−1}); <end> earns 0.
 * marginalGain(f1Series, { roles: ["search", "summarize", "update"], isStop: (r) => isEnd(r) });
 * // coding: reflect at turn t gets R_{t+1} − R_t
 * marginalGain(passRates, { roles: ["reflect"], offset: 1 });
 */
export function marginalGain<T = unknown, S = unknown>(series: TurnMetric<T, S>, options: MarginalGainOptions = {}): NamedReward<T, S> {
  const offset = options.offset ?? 0;
  const m0 = options.m0 ?? 0;
  return {
    name: options.name ?? "marginal-gain",
    fn: (traj, task) => {
      const m = series(traj, task);
      const metric = (u: number): number | undefined => (u === 0 ? (at(m, 0) ?? m0) : at(m, u));
      return selectRecords(traj as Trajectory<unknown>, options).map((r): RewardEntry => {
        if (options.isStop?.(r)) return { recordIndex: r.index, kind: "turn", value: 0 };
        const u = r.turn + offset;
        const now = u >= 0 ? metric(u) : undefined;
        const before = u >= 1 ? metric(u - 1) : undefined;
        if (now === undefined || before === undefined) {
          return { recordIndex: r.index, skip: true, reason: `no metric for turn ${u}${before === undefined ? ` or ${u - 1}` : ""}` };
        }
        return { recordIndex: r.index, kind: "turn", value: now - before };
      });
    },
  };
}
