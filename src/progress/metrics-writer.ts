// Per-step metrics as JSON lines in <runDir>/metrics.jsonl, and summary.json at the end. One line
// per step: global values plus a `roles` map of per-role values. Appends synchronously so a killed
// process loses at most the line being written; the one rewrite (a resume dropping abandoned steps)
// is atomic, so a kill never loses the history. Never interprets the metrics themselves. Every line
// also goes to a TensorBoard event file under <runDir>/tensorboard/.
import { appendFileSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeFileAtomicSync } from "../fs/atomic-file.js";
import { asDiskError } from "../fs/disk-error.js";
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
  /** Flushes the file to disk (before a checkpoint commits, so the history it continues is durable). */
  sync(): void;
  /** Writes summary.json (atomically). */
  summary(summary: Record<string, unknown>): Promise<void>;
}

/** The rows of metrics.jsonl with the text of each line; a torn last line is dropped, a bad line elsewhere throws. */
function readLines(file: string): { rows: MetricsRow[]; lines: string[]; text: string } {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const all = text.split("\n");
  const rows: MetricsRow[] = [];
  const lines: string[] = [];
  for (let i = 0; i < all.length; i++) {
    if (all[i].trim() === "") continue;
    try {
      rows.push(JSON.parse(all[i]) as MetricsRow);
      lines.push(all[i]);
    } catch (e) {
      const last = all.slice(i + 1).every((l) => l.trim() === "");
      if (last) break;
      throw new MasoError("METRICS_CORRUPT", `${file}:${i + 1} is not JSON (${(e as Error).message})`, "remove or repair that line");
    }
  }
  return { rows, lines, text };
}

/**
 * Reads metrics.jsonl; a torn last line (a process killed mid-write) is ignored, a bad line
 * elsewhere throws METRICS_CORRUPT.
 * @example
 * const rows = readMetrics("runs/a");
 */
export function readMetrics(runDir: string): MetricsRow[] {
  return readLines(join(runDir, METRICS_FILE)).rows;
}

/**
 * Throws METRICS_MISSING unless `rows` are steps 1..step, one each, in order, after an optional
 * first row of step 0 (a training run's evaluation of the untrained cast).
 */
function checkHistory(file: string, all: readonly MetricsRow[], step: number): void {
  const first = all[0]?.step === 0 ? 1 : 0;
  const rows = all.slice(first);
  const bad = rows.findIndex((r, i) => r.step !== i + 1);
  if (bad === -1 && rows.length === step) return;
  const at = bad === -1 ? `it ends at step ${rows.length}` : `line ${bad + first + 1} is step ${rows[bad].step}, not ${bad + 1}`;
  throw new MasoError(
    "METRICS_MISSING",
    `${file} does not hold the history of the checkpoint at step ${step}: ${at}`,
    "restore metrics.jsonl from a copy of the run, or start a new run; maso only ever rewrites it atomically, so something else changed it",
  );
}

/**
 * Opens the metrics file of a run for appending. With `keepUpToStep` (a resume), lines of later
 * steps and any torn line are dropped first (an atomic rewrite), so the file again ends exactly at
 * the checkpoint; with `complete` as well, the kept lines must be steps 1..keepUpToStep
 * (METRICS_MISSING otherwise, before anything is written).
 * @example
 * const metrics = openMetricsWriter(runDir);
 * metrics.write({ step: 1, loss: 5.2, roles: { planner: { reward: { total: 0.3 } } } });
 */
export function openMetricsWriter(runDir: string, opts: { keepUpToStep?: number; complete?: boolean } = {}): MetricsWriter {
  const file = join(runDir, METRICS_FILE);
  let keep: MetricsRow[] | undefined;
  try {
    mkdirSync(runDir, { recursive: true });
    if (opts.keepUpToStep !== undefined) {
      const k = opts.keepUpToStep;
      const { rows, lines, text } = readLines(file);
      keep = rows.filter((r) => r.step <= k);
      if (opts.complete) checkHistory(file, keep, k);
      const kept = lines
        .filter((_, i) => rows[i].step <= k)
        .map((l) => `${l}\n`)
        .join("");
      if (kept !== text) writeFileAtomicSync(file, kept);
    } else if (!existsSync(file)) {
      writeFileSync(file, "");
    }
  } catch (e) {
    throw asDiskError(e, file);
  }
  // on a resume the event files restart from the kept lines, so they never show abandoned steps
  const events = openEventFile(join(runDir, TENSORBOARD_DIR), { rows: keep });
  return {
    file,
    write(row) {
      const line = { ...row, time: row.time ?? new Date().toISOString() };
      try {
        appendFileSync(file, `${JSON.stringify(line)}\n`);
      } catch (e) {
        throw asDiskError(e, file);
      }
      events.write(line);
    },
    sync() {
      const fd = openSync(file, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
    summary: (s) => writeFileAtomic(join(runDir, SUMMARY_FILE), `${JSON.stringify(s, null, 2)}\n`),
  };
}
