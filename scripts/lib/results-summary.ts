// The numbers of a results run: one record per seed (test metric before and after RL, steps, wall
// time, episode metrics) and the summary over seeds (mean ± sample std). Pure; results.ts runs the
// seeds and writes summary.json, results-table.ts renders it.
import type { EpisodeComparison } from "../../src/run/compare-episodes.js";

/** A seed's outcome. */
export interface SeedResult {
  seed: number;
  /** test metric of the untrained cast (step 0, greedy) */
  before: number;
  /** test metric of the selected checkpoint (greedy) */
  after: number;
  /** "best": the best-on-dev checkpoint; "latest": the run had no dev selection */
  selection: "best" | "latest";
  /** the step of the evaluated checkpoint */
  step: number;
  testEpisodes: number;
  /** wall seconds of `maso train` (runtime build, steps, dev evals, checkpoints) in this process */
  trainSeconds: number;
  /** the run was resumed from an earlier attempt, so trainSeconds covers only the rest of it */
  resumed: boolean;
  /** the paired comparison of the before and after test evaluations, task by task (`maso compare`; absent in results written before it was recorded) */
  comparison?: EpisodeComparison;
  /** the test evaluations were redone after training (results.ts --reevaluate: the test split changed) */
  reevaluated?: boolean;
  episodeMetrics: {
    /** mean over training steps of each step's mean episode metric */
    train: Record<string, number>;
    testBefore: Record<string, number>;
    testAfter: Record<string, number>;
  };
}

export interface MeanStd {
  mean: number;
  /** sample standard deviation (n − 1); 0 for one seed */
  std: number;
  n: number;
}

/** The summary.json of one workflow variant. */
export interface ResultsSummary {
  workflow: string;
  variant: string;
  file: string;
  steps: number;
  seeds: number[];
  split: "test";
  before: MeanStd;
  after: MeanStd;
  delta: MeanStd;
  trainSeconds: MeanStd;
  /** mean over seeds of each episode metric (training steps, the untrained and the after-RL test evaluations) */
  episodeMetrics: {
    train: Record<string, number>;
    /** absent in summaries written before it was recorded; the per-seed records have it */
    testBefore?: Record<string, number>;
    testAfter: Record<string, number>;
  };
  perSeed: SeedResult[];
  /** where it ran: CPU cores Node saw and MASO_THREADS */
  machine: { cores: number; threads: string | null; node: string };
  /** figure files next to summary.json */
  plots: string[];
  finishedAt: string;
}

/** Mean and sample standard deviation. */
export function meanStd(values: readonly number[]): MeanStd {
  const n = values.length;
  const mean = n ? values.reduce((a, b) => a + b, 0) / n : Number.NaN;
  const std = n > 1 ? Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, std, n };
}

/** Per key, the mean over the records that have it. */
export function meanRecords(records: readonly Record<string, number>[]): Record<string, number> {
  const acc = new Map<string, number[]>();
  for (const r of records) for (const [k, v] of Object.entries(r)) if (Number.isFinite(v)) acc.set(k, [...(acc.get(k) ?? []), v]);
  return Object.fromEntries([...acc].map(([k, vs]) => [k, meanStd(vs).mean]));
}

/** The summary over seeds. */
export function summarize(
  head: Pick<ResultsSummary, "workflow" | "variant" | "file" | "steps" | "machine" | "plots">,
  perSeed: readonly SeedResult[],
): ResultsSummary {
  return {
    ...head,
    seeds: perSeed.map((s) => s.seed),
    split: "test",
    before: meanStd(perSeed.map((s) => s.before)),
    after: meanStd(perSeed.map((s) => s.after)),
    delta: meanStd(perSeed.map((s) => s.after - s.before)),
    trainSeconds: meanStd(perSeed.map((s) => s.trainSeconds)),
    episodeMetrics: {
      train: meanRecords(perSeed.map((s) => s.episodeMetrics.train)),
      testBefore: meanRecords(perSeed.map((s) => s.episodeMetrics.testBefore)),
      testAfter: meanRecords(perSeed.map((s) => s.episodeMetrics.testAfter)),
    },
    perSeed: [...perSeed],
    finishedAt: new Date().toISOString(),
  };
}
