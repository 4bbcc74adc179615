// The run summary panel's facts, from config.json, summary.json and the metric rows: before/after
// dev metric, best step, wall time, steps and cast. A run still training has no summary.json; its
// figures then come from the rows so far. Pure.
import type { MetricsRow } from "../progress/metrics-row.js";

export interface RunOverview {
  name: string | null;
  kind: string | null;
  /** last step written / steps planned (null when unknown) */
  lastStep: number | null;
  steps: number | null;
  wallSeconds: number | null;
  /** eval metric before training: a step-0 eval row, else summary.json `before` */
  before: { metric: number; source: "metrics" | "summary" } | null;
  /** eval metric at the end: summary.json `finalEval`, else the last eval row */
  after: { metric: number; step: number | null } | null;
  best: { step: number; metric: number } | null;
  /** role -> model (or model/adapter) */
  cast: Record<string, string>;
  finished: boolean;
}

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const evalOf = (row: MetricsRow): number | null => num(obj(row.eval).metric);

/** summary.json `before`: a number, or an object with a numeric `metric`. */
function summaryBefore(summary: Record<string, unknown>): number | null {
  return num(summary.before) ?? num(obj(summary.before).metric);
}

/**
 * The overview of one run.
 * @example
 * summarizeRun(config, summary, readMetrics(runDir)).best; // { step: 10, metric: 0.23 }
 */
export function summarizeRun(config: unknown, summary: unknown, rows: readonly MetricsRow[]): RunOverview {
  const cfg = obj(config);
  const sum = obj(summary);
  const evals = rows.filter((r) => evalOf(r) !== null).map((r) => ({ step: r.step, metric: evalOf(r) as number }));
  const zero = evals.find((e) => e.step === 0);
  const beforeSummary = summaryBefore(sum);
  const trained = evals.filter((e) => e.step > 0);
  const last = trained.at(-1);
  const finalEval = num(sum.finalEval);
  const sumBest = obj(sum.best);
  const rowBest = trained.reduce<{ step: number; metric: number } | null>((b, e) => (b === null || e.metric > b.metric ? e : b), null);
  const times = rows.map((r) => (typeof r.time === "string" ? Date.parse(r.time) : Number.NaN)).filter(Number.isFinite);
  const cast: Record<string, string> = {};
  for (const [role, target] of Object.entries(obj(cfg.cast))) cast[role] = typeof target === "string" ? target : JSON.stringify(target);
  return {
    name: typeof cfg.name === "string" ? cfg.name : null,
    kind: typeof sum.kind === "string" ? sum.kind : null,
    lastStep: rows.length ? Math.max(...rows.map((r) => r.step)) : null,
    steps: num(sum.steps) ?? num(obj(cfg.schedule).steps),
    wallSeconds: num(sum.wallSeconds) ?? (times.length > 1 ? (Math.max(...times) - Math.min(...times)) / 1000 : null),
    before: zero
      ? { metric: zero.metric, source: "metrics" }
      : beforeSummary !== null
        ? { metric: beforeSummary, source: "summary" }
        : null,
    after: finalEval !== null ? { metric: finalEval, step: last?.step ?? null } : last ? { metric: last.metric, step: last.step } : null,
    best:
      num(sumBest.step) !== null && num(sumBest.metric) !== null
        ? { step: sumBest.step as number, metric: sumBest.metric as number }
        : rowBest,
    cast,
    finished: Object.keys(sum).length > 0,
  };
}
