// Curves from runs' metrics.jsonl: per-role reward.total and the dev eval metric by step, EMA
// smoothing, and the mean / min–max across several runs (seeds). Reads metrics files; writes nothing.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MasoError } from "../../src/errors.js";
import { METRICS_FILE, type MetricsRow, readMetrics } from "../../src/progress/metrics-writer.js";

export type Point = readonly [number, number];

/** A run's metrics rows; throws RUN_NO_METRICS when the directory has no (or an empty) metrics.jsonl. */
export function readRunRows(runDir: string): MetricsRow[] {
  const rows = existsSync(join(runDir, METRICS_FILE)) ? readMetrics(runDir) : [];
  if (rows.length === 0)
    throw new MasoError(
      "RUN_NO_METRICS",
      `${runDir} has no ${METRICS_FILE} lines`,
      "pass a run directory 'maso train' has written steps to",
    );
  return rows;
}

/** Role names in first-seen order. */
export const roleNames = (rows: readonly MetricsRow[]): string[] => [...new Set(rows.flatMap((r) => Object.keys(r.roles ?? {})))];

/** (step, reward.total) of one role, skipping steps where it had no reward. */
export function roleRewards(rows: readonly MetricsRow[], role: string): Point[] {
  const out: Point[] = [];
  for (const r of rows) {
    const total = (r.roles?.[role]?.reward as { total?: unknown } | undefined)?.total;
    if (typeof total === "number" && Number.isFinite(total)) out.push([r.step, total]);
  }
  return out;
}

/** (step, eval.metric) of the steps that ran an evaluation. */
export function evalCurve(rows: readonly MetricsRow[]): Point[] {
  const out: Point[] = [];
  for (const r of rows) {
    const m = (r.eval as { metric?: unknown } | undefined)?.metric;
    if (typeof m === "number" && Number.isFinite(m)) out.push([r.step, m]);
  }
  return out;
}

/** Exponential moving average, `weight` on the past (0: none), started at the first value. */
export function ema(points: readonly Point[], weight: number): Point[] {
  let s = Number.NaN;
  return points.map(([x, y]) => {
    s = Number.isNaN(s) ? y : weight * s + (1 - weight) * y;
    return [x, s] as const;
  });
}

/** Per step present in any run: the mean over the runs that have it, and their min and max. */
export function aggregate(runs: readonly (readonly Point[])[]): { mean: Point[]; band: { x: number; lo: number; hi: number }[] } {
  const byStep = new Map<number, number[]>();
  for (const run of runs) for (const [x, y] of run) byStep.set(x, [...(byStep.get(x) ?? []), y]);
  const steps = [...byStep.keys()].sort((a, b) => a - b);
  return {
    mean: steps.map((x) => [x, byStep.get(x)!.reduce((a, b) => a + b, 0) / byStep.get(x)!.length] as const),
    band: steps.map((x) => ({ x, lo: Math.min(...byStep.get(x)!), hi: Math.max(...byStep.get(x)!) })),
  };
}
