// Writing into a run directory: one writer at a time (the run lock, src/fs/run-lock.ts), which first
// removes what killed writers left behind (their temp files and checkpoint directories) and reports a
// full or read-only disk as DISK_FULL / DISK_READ_ONLY. Knows nothing of what the run writes.
import { resolve } from "node:path";
import { cleanCheckpointLeftovers } from "../checkpoint/write-checkpoint.js";
import { MasoError } from "../errors.js";
import { removeStaleTemps } from "../fs/atomic-file.js";
import { asDiskError } from "../fs/disk-error.js";
import { lockRunDir, type RunLock } from "../fs/run-lock.js";
import { native } from "../native/binding.js";

/**
 * Takes the writer lock of `runDir` with the addon's flock (RUN_LOCKED when another process holds
 * it); the OS releases it if this process dies.
 * @example
 * const lock = lockRun("runs/demo", "maso train");
 * try { await runTraining({ ...opts, lock }); } finally { lock.release(); }
 */
export function lockRun(runDir: string, command: string): RunLock {
  return lockRunDir(runDir, {
    command,
    lockFile: (fd) => {
      const addon = native();
      if (typeof addon.lockFile !== "function")
        throw new MasoError("RUN_LOCK_FAILED", "the loaded native addon has no lockFile()", "rebuild it: npm run install");
      return addon.lockFile(fd);
    },
  });
}

/**
 * Runs `write` as the only writer of `runDir`: under `lock` when the caller already holds it (the CLI
 * takes it before writing config.json), else under a lock taken here (RUN_LOCKED when another process
 * holds it) and released when `write` settles.
 * @example
 * await asRunWriter("runs/a", undefined, "maso train", async () => trainSteps());
 */
export async function asRunWriter<R>(runDir: string, lock: RunLock | undefined, command: string, write: () => Promise<R>): Promise<R> {
  if (lock && lock.runDir !== resolve(runDir))
    throw new MasoError(
      "RUN_LOCK_FAILED",
      `the lock given for ${runDir} is the lock of ${lock.runDir}`,
      "pass the run directory's own lock",
    );
  const held = lock ?? lockRun(runDir, command);
  try {
    await cleanCheckpointLeftovers(runDir);
    await removeStaleTemps(runDir);
    return await write();
  } catch (e) {
    throw asDiskError(e, runDir, "error");
  } finally {
    if (!lock) held.release();
  }
}
