// Accumulates per-role update figures over chunks and minibatches and turns them into means.
// Bookkeeping only: it never sees tensors beyond the scalars a chunk reports.
import type { ChunkResult } from "./chunk-loss.js";
import type { RoleUpdateMetrics, TrainSample } from "./types.js";

interface Acc {
  chunks: number;
  pgLoss: number;
  clipFrac: number;
  approxKl: number;
  entropy: number;
  klRef: number;
  klRefN: number;
  valueLoss: number;
  explainedVariance: number;
  gradNorm: number;
  minibatches: Set<number>;
  skipped: number;
}

const blank = (): Acc => ({
  chunks: 0,
  pgLoss: 0,
  clipFrac: 0,
  approxKl: 0,
  entropy: 0,
  klRef: 0,
  klRefN: 0,
  valueLoss: 0,
  explainedVariance: 0,
  gradNorm: 0,
  minibatches: new Set(),
  skipped: 0,
});

/**
 * A per-role accumulator.
 *
 * @example
 * const stats = roleStats(); stats.add(chunk, mb, 0.3); stats.report(samples);
 */
export function roleStats() {
  const acc = new Map<string, Acc>();
  const get = (role: string) => {
    let a = acc.get(role);
    if (!a) acc.set(role, (a = blank()));
    return a;
  };
  return {
    add(r: Pick<ChunkResult, "role" | "metrics">, minibatch: number, gradNorm: number): void {
      const a = get(r.role);
      a.chunks++;
      a.pgLoss += r.metrics.pgLoss;
      a.clipFrac += r.metrics.clipFrac;
      a.approxKl += r.metrics.approxKl;
      a.entropy += r.metrics.entropy;
      if (Number.isFinite(r.metrics.klRef)) {
        a.klRef += r.metrics.klRef;
        a.klRefN++;
      }
      a.valueLoss += r.metrics.valueLoss;
      a.explainedVariance += r.metrics.explainedVariance;
      a.gradNorm += gradNorm;
      a.minibatches.add(minibatch);
    },
    skip(role: string): void {
      get(role).skipped++;
    },
    report(samples: readonly TrainSample[]): Record<string, RoleUpdateMetrics> {
      const out: Record<string, RoleUpdateMetrics> = {};
      const roles = new Set(samples.map((s) => s.role));
      for (const role of roles) {
        const mine = samples.filter((s) => s.role === role);
        const a = get(role);
        const c = Math.max(a.chunks, 1);
        out[role] = {
          samples: mine.length,
          responseLength: mine.reduce((x, s) => x + s.oldLogp.length, 0) / Math.max(mine.length, 1),
          entropy: a.entropy / c,
          klRef: a.klRefN ? a.klRef / a.klRefN : Number.NaN,
          pgLoss: a.pgLoss / c,
          clipFrac: a.clipFrac / c,
          approxKl: a.approxKl / c,
          gradNorm: a.gradNorm / c,
          valueLoss: a.valueLoss / c,
          explainedVariance: a.explainedVariance / c,
          minibatches: a.minibatches.size,
          skippedMinibatches: a.skipped,
        };
      }
      return out;
    },
  };
}
