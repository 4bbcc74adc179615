// Per-role metrics of one training step computed from its trajectories and combined rewards:
// reward (mean per sample, total and by kind), sample count, prompt/output lengths and format
// failure rate. Pure; optimiser-side metrics (entropy, KL, grad norm) come from the worker groups.
import type { EpisodeRewards } from "../rewards/combine.js";
import type { Trajectory } from "../workflow/trajectory.js";
import type { MetricValues } from "./metrics-writer.js";

interface Acc {
  samples: number;
  reward: number;
  byKind: Record<string, number>;
  promptTokens: number;
  outputTokens: number;
  formatFailures: number;
  records: number;
}

/**
 * `{ [role]: { reward: { total, format, … }, samples, promptLength, outputLength, formatFailureRate } }`
 * for a metrics.jsonl row's `roles` field.
 * @example
 * metrics.write({ step, roles: roleMetrics(trajectories, assigned.episodes) });
 */
export function roleMetrics(trajectories: readonly Trajectory[], rewards: readonly EpisodeRewards[]): Record<string, MetricValues> {
  const acc = new Map<string, Acc>();
  const get = (role: string) => {
    let a = acc.get(role);
    if (!a) acc.set(role, (a = { samples: 0, reward: 0, byKind: {}, promptTokens: 0, outputTokens: 0, formatFailures: 0, records: 0 }));
    return a;
  };
  const byEpisode = new Map(rewards.map((r) => [r.episodeId, r]));
  for (const t of trajectories) {
    const ep = byEpisode.get(t.episodeId);
    const rewarded = new Map((ep?.rewards ?? []).map((r) => [r.recordIndex, r]));
    for (const rec of t.records) {
      if (rec.kind !== "role" || rec.role === null) continue;
      const a = get(rec.role);
      a.records++;
      a.promptTokens += rec.promptTokens ?? 0;
      a.outputTokens += rec.outputTokens ?? 0;
      if (rec.parsed && !rec.parsed.ok) a.formatFailures++;
      const r = rewarded.get(rec.index);
      if (!r) continue;
      a.samples++;
      a.reward += typeof r.value === "number" ? r.value : r.value.reduce((x, y) => x + y, 0);
      for (const [k, v] of Object.entries(r.byKind)) a.byKind[k] = (a.byKind[k] ?? 0) + (v ?? 0);
    }
  }
  const out: Record<string, MetricValues> = {};
  for (const [role, a] of acc) {
    const per = (x: number) => (a.samples > 0 ? x / a.samples : 0);
    const reward: MetricValues = { total: per(a.reward) };
    for (const [k, v] of Object.entries(a.byKind)) reward[k] = per(v);
    out[role] = {
      reward,
      samples: a.samples,
      promptLength: a.promptTokens / a.records,
      outputLength: a.outputTokens / a.records,
      formatFailureRate: a.formatFailures / a.records,
    };
  }
  return out;
}
