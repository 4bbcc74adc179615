// A paired comparison of two evaluations on the same tasks: per task, the difference of the two
// metrics; their mean with a percentile-bootstrap 95 % interval (seeded: the same files give the
// same interval) and the paired t interval beside it; wins, losses and ties. Pairing removes the
// spread between tasks, which dwarfs the difference a training run makes on a few hundred tasks.
import { MasoError } from "../errors.js";
import { createRng } from "../rng.js";

export interface PairedOptions {
  /** bootstrap resamples (default 10 000) */
  resamples?: number;
  /** seed of the resampling (default 0) */
  seed?: number;
}

/** What `pairedComparison` measured; `diff` is after − before. */
export interface PairedComparison {
  n: number;
  meanBefore: number;
  meanAfter: number;
  meanDiff: number;
  /** percentile bootstrap 95 % interval of the mean difference */
  bootstrap95: [number, number];
  /** mean ± t(0.975, n − 1) · sd / √n; null for fewer than 2 tasks */
  t95: [number, number] | null;
  /** tasks where after > before, after < before, after = before */
  wins: number;
  losses: number;
  ties: number;
  resamples: number;
  seed: number;
}

const mean = (xs: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
};

/** The q-quantile of sorted `xs`, interpolated between neighbours (R's type 7). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

/** Student's t quantile at 0.975 for 1–30 degrees of freedom (CDF checked to 1e-9 by integration). */
const T975 = [
  12.70620474, 4.30265273, 3.18244631, 2.77644511, 2.57058184, 2.44691185, 2.36462425, 2.30600414, 2.26215716, 2.22813885, 2.20098516,
  2.17881283, 2.16036866, 2.14478669, 2.13144955, 2.1199053, 2.10981558, 2.10092204, 2.09302405, 2.08596345, 2.07961384, 2.07387307,
  2.06865761, 2.06389856, 2.05953855, 2.05552944, 2.05183052, 2.04840714, 2.04522964, 2.04227246,
];

/** Student's t quantile at 0.975: the table up to 30 degrees of freedom, then the Cornish–Fisher series (< 4e-8 off). */
export function t975(df: number): number {
  if (df <= T975.length) return T975[df - 1];
  const z = 1.959963984540054;
  const g1 = (z ** 3 + z) / 4;
  const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
  const g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384;
  const g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
}

/**
 * Compares `after[i]` with `before[i]`, task by task. Throws EVAL_COMPARE_EMPTY for no tasks and
 * EVAL_COMPARE_LENGTHS when the lists differ in length.
 * @example const c = pairedComparison([0, 1, 0], [1, 1, 0]); c.meanDiff; // 1/3
 */
export function pairedComparison(before: readonly number[], after: readonly number[], o: PairedOptions = {}): PairedComparison {
  if (before.length !== after.length)
    throw new MasoError("EVAL_COMPARE_LENGTHS", `${before.length} scores before and ${after.length} after`, "pair the scores task by task");
  const n = before.length;
  if (n === 0) throw new MasoError("EVAL_COMPARE_EMPTY", "no tasks to compare", "evaluate both on the same split");
  const resamples = o.resamples ?? 10_000;
  const seed = o.seed ?? 0;
  if (!Number.isInteger(resamples) || resamples < 100)
    throw new MasoError("EVAL_COMPARE_RESAMPLES", `resamples must be an integer ≥ 100, got ${resamples}`, "use the default 10000");
  const d = Float64Array.from(after, (a, i) => a - before[i]);
  const meanDiff = mean(d);
  const rng = createRng(seed);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += d[rng.int(0, n - 1)];
    means[r] = s / n;
  }
  means.sort();
  let ss = 0;
  for (const x of d) ss += (x - meanDiff) ** 2;
  const half = n > 1 ? t975(n - 1) * Math.sqrt(ss / (n - 1) / n) : null;
  return {
    n,
    meanBefore: mean(before),
    meanAfter: mean(after),
    meanDiff,
    bootstrap95: [quantile(means, 0.025), quantile(means, 0.975)],
    t95: half === null ? null : [meanDiff - half, meanDiff + half],
    wins: d.filter((x) => x > 0).length,
    losses: d.filter((x) => x < 0).length,
    ties: d.filter((x) => x === 0).length,
    resamples,
    seed,
  };
}
