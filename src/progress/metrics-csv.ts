// metrics.jsonl as one wide CSV for tools that import tables (W&B, MLflow, spreadsheets): a row
// per step, columns `step`, `time`, then every numeric leaf by its dotted path in order of first
// appearance; a value a step did not log is an empty cell. RFC 4180 quoting.
import { metricLeaves } from "./metric-leaves.js";
import type { MetricsRow } from "./metrics-row.js";

/** The CSV column of a metric path. */
export const metricColumn = (path: readonly string[]): string => path.join(".");

const cell = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

/**
 * The rows as CSV text (header line first, "\n" line ends).
 * @example
 * metricsCsv(readMetrics("runs/a")); // "step,time,loss\n1,2025-01-01T00:00:00.000Z,2.5\n"
 */
export function metricsCsv(rows: readonly MetricsRow[]): string {
  const columns = new Map<string, number>();
  const values = rows.map((row) => {
    const byColumn = new Map<string, number>();
    for (const leaf of metricLeaves(row)) {
      const name = metricColumn(leaf.path);
      if (!columns.has(name)) columns.set(name, columns.size);
      byColumn.set(name, leaf.value);
    }
    return byColumn;
  });
  const names = [...columns.keys()];
  const lines = [["step", "time", ...names].map(cell).join(",")];
  rows.forEach((row, i) => {
    const time = typeof row.time === "string" ? row.time : "";
    lines.push([String(row.step), time, ...names.map((n) => String(values[i].get(n) ?? ""))].map(cell).join(","));
  });
  return `${lines.join("\n")}\n`;
}
