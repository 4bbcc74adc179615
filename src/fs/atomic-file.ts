// Atomic file writes: the content goes to a temporary file in the target's directory, named with the
// writer's pid, which is fsynced and renamed over the target before the directory is fsynced. A kill
// at any moment leaves the old content or the new under the real name, never a mix or nothing; every
// rewrite of an existing run file goes through here (docs/training.md#the-run-directory). Deletes
// only temp files: its own when a write fails, and those of writers that no longer exist.
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { type FileHandle, open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { asDiskError } from "./disk-error.js";
import { fsyncPath } from "./fs-util.js";

const TEMP_RE = /^\..+\.tmp-(\d+)-[0-9a-f]+$/;

/** A temp path next to `path` (same directory, so the final rename stays on one filesystem). */
export const tempPathFor = (path: string): string =>
  join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);

/** The pid that wrote the temp file called `name`, or null when the name is not one of ours. */
export function tempOwner(name: string): number | null {
  const m = TEMP_RE.exec(name);
  return m ? Number(m[1]) : null;
}

/** True when no process `pid` exists any more (this process always exists). */
export function processGone(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Removes the temp files in `dir` left by this process or by processes that are gone; returns their names. */
export async function removeStaleTemps(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const stale = names.filter((n) => {
    const pid = tempOwner(n);
    return pid !== null && (pid === process.pid || processGone(pid));
  });
  for (const n of stale) await unlink(join(dir, n)).catch(() => {});
  return stale;
}

const pauses = new Map<string, number>();

/**
 * Test hook: with MASO_TEST_REWRITE_PAUSE=<file name>[#<n>], the n-th (default first) atomic write
 * of a file of that name in this process stops before its rename for MASO_TEST_REWRITE_PAUSE_MS
 * (default 10 s), after saying so on stderr, so a fault test can kill it there. Returns the pause.
 */
function pauseBeforeRename(tmp: string, path: string): number {
  const spec = process.env.MASO_TEST_REWRITE_PAUSE;
  if (!spec) return 0;
  const [name, nth = "1"] = spec.split("#");
  if (basename(path) !== name) return 0;
  const seen = (pauses.get(name) ?? 0) + 1;
  pauses.set(name, seen);
  if (seen !== Number(nth)) return 0;
  writeSync(2, `rewrite paused before rename: ${tmp} -> ${path}\n`);
  return Number(process.env.MASO_TEST_REWRITE_PAUSE_MS ?? 10_000);
}

const ignoreError = (f: () => void): void => {
  try {
    f();
  } catch {}
};

/** fsync of a directory, so a rename inside it is durable (platforms that cannot are skipped). */
function fsyncDirSync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (e) {
    if (!["EISDIR", "EINVAL", "EPERM", "EACCES"].includes((e as NodeJS.ErrnoException).code ?? "")) throw e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Create or replace `path` atomically: `fill` writes the content through a handle on a temp file,
 * which is then synced and renamed onto `path`, and the directory synced. On any error the temp file
 * is removed and the error rethrown (DISK_FULL / DISK_READ_ONLY for a full or read-only disk).
 */
export async function writeAtomic(path: string, fill: (fh: FileHandle) => Promise<void>): Promise<void> {
  const tmp = tempPathFor(path);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, "w");
    await fill(fh);
    await fh.sync();
    await fh.close();
    fh = undefined;
    const pause = pauseBeforeRename(tmp, path);
    if (pause > 0) await new Promise((r) => setTimeout(r, pause));
    await rename(tmp, path);
    await fsyncPath(dirname(path));
  } catch (e) {
    if (fh) await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw asDiskError(e, path);
  }
}

/** Write all of `bytes` at `position`, looping over partial writes. */
export async function writeFully(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let off = 0;
  while (off < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, off, Math.min(bytes.length - off, 1 << 30), position + off);
    off += bytesWritten;
  }
}

/**
 * Atomically create or replace `path` with a string or byte buffer.
 * @example
 * await writeFileAtomic(join(runDir, "summary.json"), `${JSON.stringify(summary)}\n`);
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  await writeAtomic(path, (fh) => writeFully(fh, bytes, 0));
}

/** writeFileAtomic for synchronous callers (the metrics writer): same temp file, fsyncs and rename. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const tmp = tempPathFor(path);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "w");
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, Math.min(bytes.length - off, 1 << 30));
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    const pause = pauseBeforeRename(tmp, path);
    if (pause > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    renameSync(tmp, path);
    fsyncDirSync(dirname(path));
  } catch (e) {
    if (fd !== undefined) ignoreError(() => closeSync(fd as number));
    ignoreError(() => unlinkSync(tmp));
    throw asDiskError(e, path);
  }
}
