// What judge and reward-model rules share once their model calls are done: turning an episode's
// judge records into reward entries (with the rule's failure policy), and a step's judge records
// into the rule's stats. A failed judgement is never a silent 0: it is a skip with the reason, an
// excluded episode, or an explicit fallback value, and it is counted.
import { pearson } from "../rl/correlation.js";
import type { JudgeRecord, Trajectory } from "../workflow/trajectory.js";
import type { ModelRuleStats } from "./model-rules.js";
import { selectRecords } from "./select.js";
import type { RecordSelection, RewardEntry, RewardKind } from "./types.js";

/**
 * What a record gets when its judgement failed: "skip" (default; left out of the update unless
 * another rule rewards it), "exclude" (the whole episode, recorded as REWARD_FN_FAILED), or a
 * fixed value.
 */
export type JudgeFailurePolicy = "skip" | "exclude" | { value: number };

export interface JudgedEntryOptions extends RecordSelection {
  kind: RewardKind;
  onFailure?: JudgeFailurePolicy;
}

/**
 * The reward entries of one rule's judge records in one trajectory: a record-mode judgement rewards
 * its record; a trajectory or group judgement rewards every selected trainable record.
 *
 * @example
 * fn: (traj) => judgedEntries(traj, judgementsOf(traj, "judge"), { kind: "judge" })
 */
export function judgedEntries(trajectory: Trajectory<unknown>, records: readonly JudgeRecord[], o: JudgedEntryOptions): RewardEntry[] {
  const selected = selectRecords(trajectory, o);
  const perRecord = records.some((j) => j.mode === "record");
  const targets = perRecord
    ? selected.map((r) => ({ index: r.index, judgement: records.find((j) => j.recordIndex === r.index) }))
    : selected.map((r) => ({ index: r.index, judgement: records[0] }));
  return targets.map(({ index, judgement }) => {
    if (judgement && judgement.score !== null) return { recordIndex: index, kind: o.kind, value: judgement.score };
    const reason = judgement ? `judge failed: ${judgement.error}` : "not judged";
    const policy = o.onFailure ?? "skip";
    if (policy === "skip") return { recordIndex: index, skip: true as const, reason };
    if (policy === "exclude") throw new Error(`${reason} (onFailure: "exclude")`);
    return { recordIndex: index, kind: o.kind, value: policy.value };
  });
}

/**
 * A step's stats of one rule from its judge records. Agreement counts the judged items whose score
 * and programmatic metric fall on the same side of `threshold` (0.5 by default).
 *
 * @example
 * ruleStats(batch.flatMap((b) => judgementsOf(b.trajectory, "judge")), { calls: 8, cacheHits: 2 });
 */
export function ruleStats(records: readonly JudgeRecord[], counts: { calls: number; cacheHits: number }, threshold = 0.5): ModelRuleStats {
  const scored = records.filter((j) => j.score !== null);
  const stats: ModelRuleStats = {
    calls: counts.calls,
    failures: records.length - scored.length,
    cacheHits: counts.cacheHits,
    meanScore: scored.length > 0 ? scored.reduce((a, j) => a + (j.score as number), 0) / scored.length : Number.NaN,
  };
  const paired = scored.filter((j) => j.metric !== null);
  if (paired.length === 0) return stats;
  const agree = paired.filter((j) => (j.score as number) >= threshold === (j.metric as number) >= threshold).length;
  return {
    ...stats,
    agreement: agree / paired.length,
    correlation: pearson(
      paired.map((j) => j.score as number),
      paired.map((j) => j.metric as number),
    ),
  };
}
