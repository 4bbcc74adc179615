// Metrics rows as TensorBoard event files: <dir>/events.out.tfevents.<unix seconds>.<host>, one
// Event per row holding one scalar per numeric leaf (tag: the leaf's path joined by "/", step: the
// row's step). The file starts with the file_version event TensorBoard expects. Appends
// synchronously, like metrics.jsonl. Encodes tensorflow's event.proto / summary.proto by hand.
import { appendFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { metricLeaves } from "./metric-leaves.js";
import type { MetricsRow } from "./metrics-row.js";
import { ProtoWriter, tfRecord } from "./tfrecord.js";

/** The folder of a run that holds its event files. */
export const TENSORBOARD_DIR = "tensorboard";
const EVENT_FILE_PREFIX = "events.out.tfevents.";

// field numbers of tensorflow.Event, Summary, Summary.Value and SessionLog
const EVENT = { wallTime: 1, step: 2, fileVersion: 3, summary: 5, sessionLog: 7 } as const;
const SUMMARY_VALUE = 1;
const VALUE = { tag: 1, simpleValue: 2 } as const;
const SESSION_LOG_STATUS = 1;
const SESSION_START = 1;

export interface EventFileWriter {
  readonly file: string;
  /** Appends the row's scalars as one event. */
  write(row: MetricsRow): void;
}

/** The tag of a metric path: TensorBoard groups charts by the part before the first "/". */
export const metricTag = (path: readonly string[]): string => path.join("/");

const wallTimeOf = (row: MetricsRow): number => {
  const t = typeof row.time === "string" ? Date.parse(row.time) : Number.NaN;
  return (Number.isFinite(t) ? t : Date.now()) / 1000;
};

/** One Event carrying the row's numeric leaves as simple_value scalars. */
export function scalarEvent(row: MetricsRow): Buffer {
  const summary = new ProtoWriter();
  for (const leaf of metricLeaves(row)) {
    summary.bytes(SUMMARY_VALUE, new ProtoWriter().bytes(VALUE.tag, metricTag(leaf.path)).float(VALUE.simpleValue, leaf.value).finish());
  }
  return new ProtoWriter()
    .double(EVENT.wallTime, wallTimeOf(row))
    .int(EVENT.step, row.step)
    .bytes(EVENT.summary, summary.finish())
    .finish();
}

/**
 * Opens a new event file in `dir`. With `rows` (a resumed run), earlier event files are removed
 * and the file restarts from those rows, then a SessionLog START at the next step makes a
 * TensorBoard that already read the old files drop their later, abandoned steps.
 * @example
 * const tb = openEventFile(join(runDir, TENSORBOARD_DIR));
 * tb.write({ step: 1, loss: 2.5 });
 */
export function openEventFile(dir: string, opts: { rows?: readonly MetricsRow[] } = {}): EventFileWriter {
  mkdirSync(dir, { recursive: true });
  if (opts.rows) for (const f of eventFiles(dir)) rmSync(join(dir, f));
  const now = Date.now() / 1000;
  const file = join(dir, `${EVENT_FILE_PREFIX}${Math.floor(now)}.${hostname()}`);
  const append = (event: Buffer) => appendFileSync(file, tfRecord(event));
  // a file reopened within the same second keeps its header and grows
  if (!existsSync(file)) append(new ProtoWriter().double(EVENT.wallTime, now).bytes(EVENT.fileVersion, "brain.Event:2").finish());
  if (opts.rows) {
    for (const row of opts.rows) append(scalarEvent(row));
    const next = (opts.rows.at(-1)?.step ?? 0) + 1;
    const start = new ProtoWriter().int(SESSION_LOG_STATUS, SESSION_START).finish();
    append(new ProtoWriter().double(EVENT.wallTime, now).int(EVENT.step, next).bytes(EVENT.sessionLog, start).finish());
  }
  return { file, write: (row) => append(scalarEvent(row)) };
}

/** The event files in `dir`, oldest name first (none when it does not exist). */
export function eventFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith(EVENT_FILE_PREFIX))
    .sort();
}
