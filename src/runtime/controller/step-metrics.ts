// Turns one step's phase outputs into the per-role metrics a run logs: reward (mean and by kind),
// advantage stats, entropy, KL to reference, clip fraction, approximate KL, grad norm, samples,
// response length, value loss, explained variance, and the rollout's prompt/output lengths and
// format failure rate. The one per-role builder; metrics.jsonl rows are a view of it
// (src/progress/role-rows.ts). Pure bookkeeping over scalars.
import type { AssignedRewards } from "../../rewards/combine.js";
import type { Trajectory } from "../../workflow/trajectory.js";
import type { AdvantageStats } from "../protocol/messages.js";
import type { OffPolicyMetrics } from "../../rl/update/types.js";
import type { RoleUpdates } from "./update-phase.js";

/** Everything logged per role per step. NaN where a figure does not apply (no reference, no critic, no records). */
export interface RoleStepMetrics {
  /** Records of this role that received a reward. */
  samples: number;
  /** Mean total reward per record. */
  reward: number;
  /** Mean reward per record by kind (format, node, turn, trajectory). */
  rewardByKind: Record<string, number>;
  /** Mean reward per record by reward function name (a record a function left alone counts 0). */
  rewardByName: Record<string, number>;
  advantageMean: number;
  advantageStd: number;
  entropy: number;
  klRef: number;
  clipFrac: number;
  approxKl: number;
  gradNorm: number;
  /** Mean response tokens of the trained samples (from the update). */
  responseLength: number;
  valueLoss: number;
  explainedVariance: number;
  /** Whether this role's policy was updated this step (false in critic warm-up or off-turn in round-robin). */
  updated: boolean;
  skippedMinibatches: number;
  /** Records of this role in the step's trajectories, rewarded or not (failed episodes' too). */
  records: number;
  /** Mean prompt and output tokens, and the share of unparseable outputs, over those records. */
  promptLength: number;
  outputLength: number;
  formatFailureRate: number;
  /** Asynchronous RL only: version lag of the trained samples, dropped stale ones, importance weights. */
  offPolicy?: OffPolicyMetrics;
}

const sum = (v: number | number[]) => (typeof v === "number" ? v : v.reduce((a, b) => a + b, 0));

/** Prompt/output tokens and format failures of each role's records, in trajectory order. */
function rolloutCounts(trajectories: readonly Trajectory[]) {
  const out = new Map<string, { records: number; promptTokens: number; outputTokens: number; formatFailures: number }>();
  for (const t of trajectories)
    for (const rec of t.records) {
      if (rec.kind !== "role" || rec.role === null) continue;
      const a = out.get(rec.role) ?? { records: 0, promptTokens: 0, outputTokens: 0, formatFailures: 0 };
      a.records++;
      a.promptTokens += rec.promptTokens ?? 0;
      a.outputTokens += rec.outputTokens ?? 0;
      if (rec.parsed && !rec.parsed.ok) a.formatFailures++;
      out.set(rec.role, a);
    }
  return out;
}

/**
 * Assembles per-role metrics: roles with rewards, advantages or updates first, then roles that
 * only have records this step.
 *
 * @example
 * const roles = roleMetrics(trajectories, assigned, advantageStats, updates);
 */
export function roleMetrics(
  trajectories: readonly Trajectory[],
  assigned: AssignedRewards,
  adv: Record<string, AdvantageStats>,
  upd: RoleUpdates,
): Record<string, RoleStepMetrics> {
  const rewards = new Map<string, { n: number; total: number; kinds: Record<string, number>; names: Record<string, number> }>();
  for (const ep of assigned.episodes)
    for (const r of ep.rewards) {
      const role = r.role ?? "?";
      const a = rewards.get(role) ?? { n: 0, total: 0, kinds: {}, names: {} };
      a.n++;
      a.total += sum(r.value);
      for (const [k, v] of Object.entries(r.byKind)) a.kinds[k] = (a.kinds[k] ?? 0) + (v ?? 0);
      for (const [k, v] of Object.entries(r.bySource)) a.names[k] = (a.names[k] ?? 0) + v;
      rewards.set(role, a);
    }
  const rollout = rolloutCounts(trajectories);
  const roles = new Set([...rewards.keys(), ...Object.keys(adv), ...Object.keys(upd), ...rollout.keys()]);
  const out: Record<string, RoleStepMetrics> = {};
  for (const role of roles) {
    const rw = rewards.get(role) ?? { n: 0, total: 0, kinds: {}, names: {} };
    const ro = rollout.get(role) ?? { records: 0, promptTokens: 0, outputTokens: 0, formatFailures: 0 };
    const p = upd[role]?.policy;
    const c = upd[role]?.critic;
    out[role] = {
      samples: rw.n,
      reward: rw.n ? rw.total / rw.n : Number.NaN,
      rewardByKind: Object.fromEntries(Object.entries(rw.kinds).map(([k, v]) => [k, v / Math.max(rw.n, 1)])),
      rewardByName: Object.fromEntries(Object.entries(rw.names).map(([k, v]) => [k, v / Math.max(rw.n, 1)])),
      advantageMean: adv[role]?.advantageMean ?? Number.NaN,
      advantageStd: adv[role]?.advantageStd ?? Number.NaN,
      entropy: p?.entropy ?? c?.entropy ?? Number.NaN,
      klRef: p?.klRef ?? Number.NaN,
      clipFrac: p?.clipFrac ?? Number.NaN,
      approxKl: p?.approxKl ?? Number.NaN,
      gradNorm: p?.gradNorm ?? Number.NaN,
      responseLength: p?.responseLength ?? c?.responseLength ?? Number.NaN,
      valueLoss: c?.valueLoss ?? Number.NaN,
      explainedVariance: c?.explainedVariance ?? Number.NaN,
      updated: p !== undefined && p.minibatches > p.skippedMinibatches,
      skippedMinibatches: p?.skippedMinibatches ?? 0,
      records: ro.records,
      promptLength: ro.promptTokens / ro.records,
      outputLength: ro.outputTokens / ro.records,
      formatFailureRate: ro.formatFailures / ro.records,
      ...(p?.offPolicy && { offPolicy: p.offPolicy }),
    };
  }
  return out;
}

/** Mean of each numeric trajectory metric over episodes. */
export function meanMetrics(all: readonly Record<string, number>[]): Record<string, number> {
  const acc: Record<string, number> = {};
  for (const m of all) for (const [k, v] of Object.entries(m)) acc[k] = (acc[k] ?? 0) + v;
  return Object.fromEntries(Object.entries(acc).map(([k, v]) => [k, v / Math.max(all.length, 1)]));
}
