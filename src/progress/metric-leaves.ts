// The numeric leaves of a metrics row as (path, value) pairs, in the row's own key order: what the
// TensorBoard event files and the CSV export carry. `step` and `time` are the row's coordinates,
// not metrics; strings, booleans and nulls are not plotted; arrays are walked by index.
import type { MetricsRow } from "./metrics-row.js";

/** One plotted value: its path from the row's root (`["roles", "planner", "reward", "total"]`). */
export interface MetricLeaf {
  path: string[];
  value: number;
}

/**
 * Every finite number under the row, depth first.
 * @example
 * metricLeaves({ step: 1, loss: 2, roles: { a: { kl: 0.1 } } }); // [{ path: ["loss"], value: 2 }, { path: ["roles", "a", "kl"], value: 0.1 }]
 */
export function metricLeaves(row: MetricsRow): MetricLeaf[] {
  const out: MetricLeaf[] = [];
  const walk = (v: unknown, path: string[]): void => {
    if (typeof v === "number") {
      if (Number.isFinite(v)) out.push({ path, value: v });
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    }
  };
  for (const [k, v] of Object.entries(row)) if (k !== "step" && k !== "time") walk(v, [k]);
  return out;
}
