// Follows a run's metrics.jsonl for the dashboard: each poll reads only the bytes appended since the
// last one and keeps the rows parsed so far, starting over only when the file was replaced, cut
// short or rewritten (a resume rewrites it). Same rules as readMetrics: a torn last line is left for
// later, a bad line followed by more lines is METRICS_CORRUPT. Reads regular files only (a FIFO in
// its place is FS_NOT_REGULAR_FILE, never a blocked thread); never writes.
import { join } from "node:path";
import type { FileHandle } from "node:fs/promises";
import { MasoError } from "../errors.js";
import { openRegularFile } from "../fs/fs-util.js";
import { METRICS_FILE, type MetricsRow } from "../progress/metrics-writer.js";

/** Bytes read per chunk: the thread parses one chunk at a time and serves other requests between them. */
const CHUNK = 4 * 1024 * 1024;
/** A line longer than this is not a metrics row. */
const MAX_LINE = 64 * 1024 * 1024;
/** Bytes before the read offset remembered to notice a rewrite of what was already read. */
const FINGERPRINT = 256;

/** The rows of one metrics.jsonl, brought up to date by `read()`. */
export interface MetricsTail {
  readonly file: string;
  /** every row so far (the returned array is the tail's own: do not modify it) */
  read(): Promise<readonly MetricsRow[]>;
}

/**
 * A follower of `<runDir>/metrics.jsonl`; a missing file reads as no rows.
 * @example
 * const tail = metricsTail("runs/a"); const rows = await tail.read(); // later: only new lines are read
 */
export function metricsTail(runDir: string): MetricsTail {
  const file = join(runDir, METRICS_FILE);
  let rows: MetricsRow[] = [];
  let offset = 0; // bytes consumed, always at a line start
  let lineNo = 0; // lines consumed
  let identity = ""; // dev:ino of the file read
  let fingerprint = Buffer.alloc(0); // the bytes just before `offset`
  let torn: { line: number; message: string } | null = null; // a bad line that was the last so far
  let busy: Promise<unknown> = Promise.resolve();

  const reset = () => {
    rows = [];
    offset = 0;
    lineNo = 0;
    fingerprint = Buffer.alloc(0);
    torn = null;
  };

  const consume = (text: string) => {
    const lines = text.split("\n");
    lines.pop(); // text ends with "\n": the last piece is empty
    for (const line of lines) {
      lineNo++;
      if (line.trim() === "") continue;
      if (torn) throw new MasoError("METRICS_CORRUPT", `${file}:${torn.line} is not JSON (${torn.message})`, "remove or repair that line");
      try {
        rows.push(JSON.parse(line) as MetricsRow);
      } catch (e) {
        torn = { line: lineNo, message: (e as Error).message };
      }
    }
  };

  const unchanged = async (fh: FileHandle): Promise<boolean> => {
    if (fingerprint.length === 0) return true;
    const buf = Buffer.alloc(fingerprint.length);
    const { bytesRead } = await fh.read(buf, 0, buf.length, offset - buf.length);
    return bytesRead === buf.length && buf.equals(fingerprint);
  };

  const update = async (): Promise<readonly MetricsRow[]> => {
    let fh: FileHandle;
    try {
      fh = await openRegularFile(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") {
        reset();
        return rows;
      }
      throw e;
    }
    try {
      const st = await fh.stat();
      const id = `${st.dev}:${st.ino}`;
      if (id !== identity || st.size < offset || !(await unchanged(fh))) reset();
      identity = id;
      let carry = Buffer.alloc(0);
      let pos = offset;
      while (pos < st.size) {
        const buf = Buffer.allocUnsafe(Math.min(CHUNK, st.size - pos));
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
        const data = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        const end = data.lastIndexOf(10) + 1;
        carry = Buffer.from(data.subarray(end));
        if (carry.length > MAX_LINE)
          throw new MasoError("METRICS_CORRUPT", `${file}:${lineNo + 1} is longer than ${MAX_LINE} bytes`, "remove or repair that line");
        if (end === 0) continue;
        const complete = data.subarray(0, end);
        consume(complete.toString("utf8"));
        offset += end;
        fingerprint = Buffer.from(complete.subarray(Math.max(0, end - FINGERPRINT)));
      }
      return rows;
    } catch (e) {
      // rows may hold part of a chunk whose offset was not recorded: start over on the next poll
      reset();
      identity = "";
      throw e;
    } finally {
      await fh.close();
    }
  };

  return {
    file,
    read() {
      // one update at a time: two polls at once would read the same bytes twice
      const next = busy.then(update, update);
      busy = next.catch(() => {});
      return next;
    },
  };
}
