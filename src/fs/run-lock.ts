// One writer per run directory: a training run holds an exclusive flock on <runDir>/.lock while it
// is open, and a second writer is refused with RUN_LOCKED naming the holder's pid. The OS drops the
// lock when its holder dies in any way (kill -9 included), so a killed run never leaves a stale lock.
// Readers (eval, export, serve, dashboard) never take it. The lock file is never deleted: removing
// it would let two processes each lock a different file of the same name. The lock call itself
// (native flock) is passed in: src/run/run-dir.ts's lockRun gives the addon's.
import { closeSync, constants, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { MasoError } from "../errors.js";
import { asDiskError } from "./disk-error.js";
import { processGone } from "./atomic-file.js";

export const RUN_LOCK_FILE = ".lock";

/** What the lock file says about its holder. */
export interface LockHolder {
  pid: number;
  host: string;
  /** when the lock was taken (ISO time) */
  since: string;
  /** what holds it, e.g. "maso train" */
  command: string;
}

/** A held run-directory lock. */
export interface RunLock {
  /** the run directory, resolved */
  readonly runDir: string;
  readonly file: string;
  /** Releases the lock (closes the lock file); later calls do nothing. */
  release(): void;
}

function readHolder(file: string): LockHolder | null {
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as Partial<LockHolder>;
    return Number.isSafeInteger(v.pid) ? (v as LockHolder) : null;
  } catch {
    return null;
  }
}

function holderText(h: LockHolder | null): string {
  if (!h || (h.host === hostname() && processGone(h.pid))) return "another process (it has not recorded its pid yet)";
  if (h.pid === process.pid && h.host === hostname()) return `this process (pid ${h.pid}, ${h.command}, since ${h.since})`;
  return `pid ${h.pid} on ${h.host} (${h.command}, since ${h.since})`;
}

/**
 * Takes the writer lock of `runDir` (creating the directory), or throws RUN_LOCKED naming the holder.
 * `lockFile(fd)` takes an exclusive lock on the open file without waiting (false: held elsewhere) and
 * must be one the OS drops when its process dies (flock). Hold the lock for as long as anything in
 * the run directory may be written; `release()` or the end of the process frees it.
 * @example
 * const lock = lockRunDir("runs/demo", { command: "maso train", lockFile: native().lockFile });
 * try { await train(); } finally { lock.release(); }
 */
export function lockRunDir(runDir: string, o: { command: string; lockFile: (fd: number) => boolean }): RunLock {
  const dir = resolve(runDir);
  const file = join(dir, RUN_LOCK_FILE);
  let fd: number;
  try {
    mkdirSync(dir, { recursive: true });
    // read-write and created if absent, never truncated: a refused process must not erase the holder's pid
    fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o644);
  } catch (e) {
    throw asDiskError(e, file);
  }
  let taken: boolean;
  try {
    taken = o.lockFile(fd);
  } catch (e) {
    closeSync(fd);
    if (e instanceof MasoError) throw e;
    throw new MasoError(
      "RUN_LOCK_FAILED",
      `cannot lock ${file}: ${(e as Error).message}`,
      "put the run directory on a local file system that supports file locks",
    );
  }
  if (!taken) {
    closeSync(fd);
    throw new MasoError(
      "RUN_LOCKED",
      `${dir} is being written by ${holderText(readHolder(file))}`,
      "wait for that run to end or stop it; only one process may write a run directory (maso eval, export, serve and dashboard may read it meanwhile)",
    );
  }
  const holder: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), command: o.command };
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${JSON.stringify(holder)}\n`, 0);
  } catch (e) {
    closeSync(fd);
    throw asDiskError(e, file);
  }
  let open = true;
  return {
    runDir: dir,
    file,
    release() {
      if (!open) return;
      open = false;
      try {
        ftruncateSync(fd, 0); // still held here: nobody reads a finished holder's pid
      } catch {}
      closeSync(fd);
    },
  };
}
