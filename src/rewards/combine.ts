// Runs reward functions on trajectories, validates their entries and sums them per record,
// keeping a per-kind and per-function breakdown. It sends nothing anywhere; the controller does.
// Reward functions receive the trajectory itself, so which records are trainable (and their
// samples) is read before any of them runs, never after.

import { MasoError } from "../errors.js";
import {
  isTrainable,
  type JudgeRecord,
  type OwnedSample,
  type SampleHandle,
  type StepRecord,
  type Trajectory,
} from "../workflow/trajectory.js";
import { isSkip, type NamedReward, REWARD_KINDS, type RewardAssignment, type RewardEntry, type RewardKind } from "./types.js";

/**
 * A trainable record as it was before any reward function ran: its sample's identity (in training,
 * the sample ledger's own entry; see src/runtime/controller/sample-ledger.ts ownedRecords) and what the
 * reward checks read.
 */
export interface TrainableRecord {
  recordIndex: number;
  turn: number;
  outputTokens: number | null;
  sample: OwnedSample;
}

/**
 * The combined reward of one trainable record, as the rewards files keep it: the record's sample
 * identity written out (from its TrainableRecord's `sample`), and the reward.
 */
export interface CombinedReward {
  recordIndex: number;
  node: string;
  visit: number;
  turn: number;
  role: string;
  model: string;
  sampleHandle: SampleHandle;
  /** Sum over reward functions; per token when any term is per token (scalars land on the last token). */
  value: number | number[];
  /** Sum per kind (per-token terms summed over tokens), for logging. */
  byKind: Partial<Record<RewardKind, number>>;
  /** Sum per reward function name, for logging. */
  bySource: Record<string, number>;
}

/** A trainable record that every function mentioning it skipped: it is left out of the update. */
export interface SkippedRecord {
  recordIndex: number;
  node: string;
  visit: number;
  reasons: string[];
}

export interface EpisodeRewards {
  episodeId: string;
  taskId: string | null;
  rewards: CombinedReward[];
  skipped: SkippedRecord[];
  /** Model-scored rules' verdicts on this episode (the full judge records are in its trajectory). */
  judged?: JudgedSummary[];
}

/** One judge record, without its input and output text. */
export type JudgedSummary = Pick<JudgeRecord, "rule" | "judge" | "mode" | "recordIndex" | "group" | "score" | "error" | "cached">;

/**
 * The trainable records of a trajectory as they are now, by record index (a copy: later edits of
 * the trajectory do not reach it).
 *
 * @example
 * const trainable = trainableRecords(traj); // before handing traj to user code
 */
export function trainableRecords(trajectory: Trajectory<unknown>): Map<number, TrainableRecord> {
  const out = new Map<number, TrainableRecord>();
  trajectory.records.forEach((r, i) => {
    if (!isTrainable(r)) return;
    // no ledger here (evaluation, a trajectory read back): the record itself names its sample
    const sample = { episodeId: trajectory.episodeId, role: r.role!, node: r.node, visit: r.visit, handle: { ...r.sampleHandle! } };
    out.set(i, { recordIndex: i, turn: r.turn, outputTokens: r.outputTokens, sample });
  });
  return out;
}

type RecordView = Pick<StepRecord, "node" | "visit" | "kind">;

const where = (episodeId: string, r: Pick<StepRecord, "node" | "visit">, index: number): string =>
  `episode "${episodeId}", node "${r.node}" visit ${r.visit} (record ${index})`;

const sumOf = (v: number | number[]): number => (typeof v === "number" ? v : v.reduce((a, x) => a + x, 0));

function addValues(a: number | number[], b: number | number[], onMismatch: () => never): number | number[] {
  if (typeof a === "number" && typeof b === "number") return a + b;
  if (typeof a === "number") return addValues(b, a, onMismatch);
  if (typeof b === "number") return a.map((x, i) => (i === a.length - 1 ? x + b : x));
  if (a.length !== b.length) onMismatch();
  return a.map((x, i) => x + b[i]);
}

/** Runs one reward function, turning a throw or a non-list into the MasoError that names it. */
function entriesOf<T, S>(episodeId: string, { name, fn }: NamedReward<T, S>, trajectory: Trajectory<S>, task: T): readonly RewardEntry[] {
  let entries: readonly RewardEntry[];
  try {
    entries = fn(trajectory, task);
  } catch (err) {
    throw new MasoError(
      "REWARD_FN_FAILED",
      `episode "${episodeId}": reward function "${name}" threw: ${err instanceof Error ? err.message : String(err)}`,
      "the episode is excluded from the update; fix the reward function",
    );
  }
  if (!Array.isArray(entries)) {
    const thenable = typeof (entries as { then?: unknown } | null)?.then === "function";
    throw new MasoError(
      "REWARD_INVALID",
      `episode "${episodeId}": reward function "${name}" returned ${thenable ? "a Promise" : typeof entries}, not a list`,
      thenable
        ? "reward functions are synchronous: compute what they need in the workflow (a tool or function node)"
        : "return RewardEntry[]",
    );
  }
  return entries;
}

/** Checks a non-skip entry for a trainable record: its kind, a finite value, and one value per output token. */
function checkAssignment(e: RewardAssignment, owned: TrainableRecord, at: string, name: string): void {
  if (!REWARD_KINDS.includes(e.kind))
    throw new MasoError(
      "REWARD_INVALID",
      `${at}: reward function "${name}" used unknown kind "${String(e.kind)}"`,
      `use one of ${REWARD_KINDS.join(", ")}`,
    );
  const v = e.value;
  const finite =
    typeof v === "number"
      ? Number.isFinite(v)
      : Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number" && Number.isFinite(x));
  if (!finite) {
    throw new MasoError(
      "REWARD_NON_FINITE",
      `${at}: reward function "${name}" gave ${Array.isArray(v) ? `a per-token reward with a non-finite or missing value` : String(v)}`,
      "check the metric for NaN/Infinity (e.g. 0/0) and empty lists",
    );
  }
  if (Array.isArray(v) && owned.outputTokens !== null && v.length !== owned.outputTokens) {
    throw new MasoError(
      "REWARD_INVALID",
      `${at}: reward function "${name}" gave ${v.length} per-token values for ${owned.outputTokens} output tokens`,
      "give one value per output token",
    );
  }
}

/** Adds one checked entry's value into its record's combined reward (created on first use). */
function addEntry(prev: CombinedReward | undefined, owned: TrainableRecord, e: RewardAssignment, name: string, at: string): CombinedReward {
  const { value: v, kind } = e;
  const mismatch = (): never => {
    throw new MasoError("REWARD_INVALID", `${at}: per-token rewards of different lengths`, "give one value per output token");
  };
  const { node, visit, role, handle } = owned.sample;
  const c: CombinedReward = prev ?? {
    recordIndex: owned.recordIndex,
    node,
    visit,
    turn: owned.turn,
    role,
    model: handle.model,
    sampleHandle: { ...handle },
    value: 0,
    byKind: {},
    bySource: {},
  };
  c.value = prev ? addValues(c.value, v, mismatch) : Array.isArray(v) ? [...v] : v;
  c.byKind[kind] = (c.byKind[kind] ?? 0) + sumOf(v);
  c.bySource[name] = (c.bySource[name] ?? 0) + sumOf(v);
  return c;
}

/**
 * Runs the reward functions on one trajectory and combines their entries per record. Throws a
 * MasoError naming the episode, node and visit when a reward is missing (REWARD_MISSING),
 * duplicated by one function (REWARD_DUPLICATE), not finite (REWARD_NON_FINITE) or malformed
 * (REWARD_INVALID); a function that throws gives REWARD_FN_FAILED. `trainable` (default: read from
 * the trajectory before the first function runs) says which records need a reward and their samples.
 *
 * @example
 * const { rewards } = combineRewards(traj, task, [formatReward(), sharedOutcome(f1Score)]);
 */
export function combineRewards<T, S>(
  trajectory: Trajectory<S>,
  task: T,
  functions: readonly NamedReward<T, S>[],
  trainable: ReadonlyMap<number, TrainableRecord> = trainableRecords(trajectory as Trajectory<unknown>),
): EpisodeRewards {
  const { episodeId, taskId } = trajectory;
  const views: RecordView[] = trajectory.records.map(({ node, visit, kind }) => ({ node, visit, kind }));
  const combined = new Map<number, CombinedReward>();
  const skips = new Map<number, string[]>();
  for (const rule of functions) {
    const { name } = rule;
    const seen = new Set<number>();
    for (const e of entriesOf(episodeId, rule, trajectory, task)) {
      const idx = e?.recordIndex;
      const rec = Number.isInteger(idx) ? views[idx] : undefined;
      if (rec === undefined)
        throw new MasoError(
          "REWARD_INVALID",
          `episode "${episodeId}": reward function "${name}" names record ${String(idx)}, which does not exist`,
          "use record.index from the trajectory",
        );
      const at = where(episodeId, rec, idx);
      if (seen.has(idx))
        throw new MasoError(
          "REWARD_DUPLICATE",
          `${at}: reward function "${name}" gave it two entries`,
          "return at most one entry per record per function",
        );
      seen.add(idx);
      const owned = trainable.get(idx);
      if (isSkip(e)) {
        if (owned && !combined.has(idx)) skips.set(idx, [...(skips.get(idx) ?? []), `${name}: ${e.reason}`]);
        continue;
      }
      if (!owned)
        throw new MasoError(
          "REWARD_INVALID",
          `${at}: reward function "${name}" rewards a ${rec.kind} record with no sample`,
          "reward only role records with a sample handle",
        );
      checkAssignment(e, owned, at, name);
      skips.delete(idx);
      combined.set(idx, addEntry(combined.get(idx), owned, e, name, at));
    }
  }
  return {
    episodeId,
    taskId,
    rewards: [...combined.values()].sort((a, b) => a.recordIndex - b.recordIndex),
    skipped: skippedOf(episodeId, trainable, combined, skips),
  };
}

/** The trainable records no function rewarded: each skipped by some function, or REWARD_MISSING. */
function skippedOf(
  episodeId: string,
  trainable: ReadonlyMap<number, TrainableRecord>,
  combined: ReadonlyMap<number, CombinedReward>,
  skips: ReadonlyMap<number, string[]>,
): SkippedRecord[] {
  const skipped: SkippedRecord[] = [];
  for (const [idx, rec] of [...trainable].sort((a, b) => a[0] - b[0])) {
    if (combined.has(idx)) continue;
    const reasons = skips.get(idx);
    if (!reasons) {
      throw new MasoError(
        "REWARD_MISSING",
        `${where(episodeId, rec.sample, idx)}: no reward function assigned or skipped it`,
        "add a reward function covering this role, or skip the record explicitly",
      );
    }
    skipped.push({ recordIndex: idx, node: rec.sample.node, visit: rec.sample.visit, reasons });
  }
  return skipped;
}

/** An episode left out of the update, with why. */
export interface RewardFailure {
  episodeId: string;
  code: string;
  message: string;
}

export interface AssignOptions {
  /** Validation errors (missing, duplicate, non-finite, malformed): "throw" (default, loud) or "exclude" the episode. */
  onInvalid?: "throw" | "exclude";
  /** Reward episodes whose walk ended with status "error" (default false: excluded and counted). */
  includeFailedEpisodes?: boolean;
}

export interface AssignedRewards {
  episodes: EpisodeRewards[];
  failures: RewardFailure[];
  counts: { episodes: number; rewarded: number; failed: number; records: number; skippedRecords: number };
}

/** One episode to reward; `trainable` as for {@link combineRewards}. */
export interface RewardInput<T, S> {
  trajectory: Trajectory<S>;
  task: T;
  trainable?: ReadonlyMap<number, TrainableRecord>;
}

/**
 * Rewards a batch. A reward function that throws excludes that episode (recorded in `failures`
 * and counted), never crashes the batch; validation errors throw unless `onInvalid: "exclude"`.
 * An episode that ended in an error is excluded with its own error code (EPISODE_TIMEOUT, …).
 *
 * @example
 * const { episodes, failures } = assignRewards(trajectories.map((t, i) => ({ trajectory: t, task: tasks[i] })), rewardFns);
 */
export function assignRewards<T, S>(
  items: readonly RewardInput<T, S>[],
  functions: readonly NamedReward<T, S>[],
  options: AssignOptions = {},
): AssignedRewards {
  const episodes: EpisodeRewards[] = [];
  const failures: RewardFailure[] = [];
  for (const { trajectory, task, trainable } of items) {
    const { episodeId } = trajectory;
    if (trajectory.status === "error" && !options.includeFailedEpisodes) {
      failures.push({
        episodeId,
        code: trajectory.error?.code ?? "EPISODE_FAILED",
        message: trajectory.error?.message ?? "episode ended with an error",
      });
      continue;
    }
    try {
      const rewarded = combineRewards(trajectory, task, functions, trainable);
      if (trajectory.judgements?.length)
        rewarded.judged = trajectory.judgements.map(({ rule, judge, mode, recordIndex, group, score, error, cached }) => ({
          rule,
          judge,
          mode,
          recordIndex,
          group,
          score,
          error,
          cached,
        }));
      episodes.push(rewarded);
    } catch (err) {
      if (!(err instanceof MasoError)) throw err;
      if (err.code !== "REWARD_FN_FAILED" && options.onInvalid !== "exclude") throw err;
      failures.push({ episodeId, code: err.code, message: err.message });
    }
  }
  return {
    episodes,
    failures,
    counts: {
      episodes: items.length,
      rewarded: episodes.length,
      failed: failures.length,
      records: episodes.reduce((a, e) => a + e.rewards.length, 0),
      skippedRecords: episodes.reduce((a, e) => a + e.skipped.length, 0),
    },
  };
}
