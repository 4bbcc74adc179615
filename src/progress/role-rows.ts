// The metrics.jsonl view of a step's per-role metrics (src/runtime/controller/step-metrics.ts builds them):
// nested names (reward.total, kl.ref, length.response, …) and 0/1 for flags. A role with no rewarded
// record this step logs only its rollout figures. Pure; the key order is the file's.
import type { OffPolicyMetrics } from "../rl/update/types.js";
import type { RoleStepMetrics } from "../runtime/controller/step-metrics.js";
import type { MetricValues } from "./metrics-writer.js";

/**
 * One role's `roles` entry of a metrics.jsonl row.
 * @example
 * roleRow(report.roles.solver); // { reward: { total: 0.4, trajectory: 0.4 }, samples: 8, promptLength: 14, … }
 */
export function roleRow(m: RoleStepMetrics): MetricValues {
  const rollout = m.records > 0 && {
    promptLength: m.promptLength,
    outputLength: m.outputLength,
    formatFailureRate: m.formatFailureRate,
  };
  if (m.samples === 0) return { reward: { total: 0 }, samples: 0, ...rollout };
  return {
    reward: { total: m.reward, ...m.rewardByKind, byName: { ...m.rewardByName } },
    samples: m.samples,
    ...rollout,
    advantage: { mean: m.advantageMean, std: m.advantageStd },
    entropy: m.entropy,
    kl: { ref: m.klRef, approx: m.approxKl },
    clipFrac: m.clipFrac,
    gradNorm: m.gradNorm,
    // the rollout's prompt length is promptLength above: no second copy under length
    length: { response: m.responseLength },
    value: { loss: m.valueLoss, explainedVariance: m.explainedVariance },
    updated: m.updated ? 1 : 0,
    skippedMinibatches: m.skippedMinibatches,
    ...(m.offPolicy && { offPolicy: offPolicyRow(m.offPolicy) }),
  };
}

/** Asynchronous RL's figures: `lag.<k>` samples k versions behind, dropped, importance mean/max/clipped. */
function offPolicyRow(o: OffPolicyMetrics): MetricValues {
  return {
    lag: { ...o.lag },
    dropped: o.dropped,
    importance: { mean: o.importanceMean, max: o.importanceMax, clipped: o.importanceClipped },
  };
}

/**
 * The `roles` field of a metrics.jsonl row.
 * @example
 * metrics.write({ step, roles: roleRows(report.roles) });
 */
export function roleRows(roles: Readonly<Record<string, RoleStepMetrics>>): Record<string, MetricValues> {
  return Object.fromEntries(Object.entries(roles).map(([role, m]) => [role, roleRow(m)]));
}
