// Turns a write that failed because the disk is full, over quota or read-only into a MasoError a user
// can act on (DISK_FULL, DISK_READ_ONLY) instead of a stack trace. Maps errors only; never retries.
import { MasoError } from "../errors.js";

const FULL: Record<string, string> = { ENOSPC: "no space left on the device", EDQUOT: "disk quota exceeded" };

/**
 * `e` as DISK_FULL (ENOSPC, EDQUOT) or DISK_READ_ONLY (EROFS) naming `path`, or `e` itself for any
 * other error. `prefer: "error"` names the error's own path when it has one (a caller that only
 * knows the directory).
 * @example
 * try { appendFileSync(file, line); } catch (e) { throw asDiskError(e, file); }
 */
export function asDiskError(e: unknown, path: string, prefer: "given" | "error" = "given"): unknown {
  if (e instanceof MasoError) return e;
  const err = e as NodeJS.ErrnoException | undefined;
  const code = err?.code;
  const where = prefer === "error" && typeof err?.path === "string" ? err.path : path;
  if (code !== undefined && code in FULL)
    return new MasoError(
      "DISK_FULL",
      `${FULL[code]} writing ${where} (${code})`,
      "free space (or raise the quota) on that disk, then continue with --resume: the run goes on from its last checkpoint exactly",
    );
  if (code === "EROFS")
    return new MasoError(
      "DISK_READ_ONLY",
      `cannot write ${where}: the file system is read-only (EROFS)`,
      "remount it read-write, or copy the run directory to a writable disk and continue with --resume",
    );
  return e;
}
