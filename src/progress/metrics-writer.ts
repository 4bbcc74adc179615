// Per-step metrics as JSON lines in <runDir>/metrics.jsonl, and summary.json at the end. One line
// per step: global values plus a `roles` map of per-role values. Appends synchronously so a killed
// process loses at most the line being written; never interprets the metrics themselves. Every
// line also goes to a TensorBoard event file under <runDir>/tensorboard/.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../fs/atomic-file.js";
import { MasoError } from "../errors.js";
import type { MetricsRow } from "./metrics-row.js";
import { openEventFile, TENSORBOARD_DIR } from "./tensorboard-writer.js";

export const METRICS_FILE = "metrics.jsonl";
export const SUMMARY_FILE = "summary.json";

export type { MetricValues, MetricsRow } from "./metrics-row.js";

export interface MetricsWriter {
  readonly file: string;
  /** Appends one step's line. */
  write(row: MetricsRow): void;
  /** Writes summary.json (atomically). */
  summary(summary: Record<string, unknown>): Promise<void>;
}

/**
 * Reads metrics.jsonl; a torn last line (a process killed mid-write) is ignored, a bad line
 * elsewhere throws METRICS_CORRUPT.
 * @example
 * const rows = readMetrics("runs/a");
 */
export function readMetrics(runDir: string): MetricsRow[] {
  const file = join(runDir, METRICS_FILE);
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, "utf8").split("\n");
  const rows: MetricsRow[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === "") continue;
    try {
      rows.push(JSON.parse(lines[i]) as MetricsRow);
    } catch (e) {
      const last = lines.slice(i + 1).every((l) => l.trim() === "");
      if (last) break;
      throw new MasoError("METRICS_CORRUPT", `${file}:${i + 1} is not JSON (${(e as Error).message})`, "remove or repair that line");
    }
  }
  return rows;
}

/**
 * Opens the metrics file of a run for appending. With `keepUpToStep` (a resume), lines of later
 * steps and any torn line are dropped first, so the file again ends exactly at the checkpoint.
 * @example
 * const metrics = openMetricsWriter(runDir);
 * metrics.write({ step: 1, loss: 5.2, roles: { planner: { reward: { total: 0.3 } } } });
 */
export function openMetricsWriter(runDir: string, opts: { keepUpToStep?: number } = {}): MetricsWriter {
  mkdirSync(runDir, { recursive: true });
  const file = join(runDir, METRICS_FILE);
  let keep: MetricsRow[] | undefined;
  if (opts.keepUpToStep !== undefined) {
    keep = readMetrics(runDir).filter((r) => r.step <= opts.keepUpToStep!);
    writeFileSync(file, keep.map((r) => `${JSON.stringify(r)}\n`).join(""));
  } else if (!existsSync(file)) {
    writeFileSync(file, "");
  }
  // on a resume the event files restart from the kept lines, so they never show abandoned steps
  const events = openEventFile(join(runDir, TENSORBOARD_DIR), { rows: keep });
  return {
    file,
    write(row) {
      const line = { ...row, time: row.time ?? new Date().toISOString() };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
      events.write(line);
    },
    summary: (s) => writeFileAtomic(join(runDir, SUMMARY_FILE), `${JSON.stringify(s, null, 2)}\n`),
  };
}
