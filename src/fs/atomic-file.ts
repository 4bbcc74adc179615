// Atomic-ish file writes for checkpoints: write to a temporary name in the target's directory,
// flush, then rename over the target, so a crash never leaves a half-written file under the real
// name. Only this module creates or renames temp files; it never deletes anything but its own temp.
import { randomBytes } from "node:crypto";
import { type FileHandle, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** A temp path next to `path` (same directory, so the final rename stays on one filesystem). */
export const tempPathFor = (path: string): string =>
  join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);

/**
 * Create `path` atomically: `fill` writes the content through a handle on a temp file, which is
 * then synced and renamed onto `path`. On any error the temp file is removed and the error rethrown.
 */
export async function writeAtomic(path: string, fill: (fh: FileHandle) => Promise<void>): Promise<void> {
  const tmp = tempPathFor(path);
  const fh = await open(tmp, "w");
  let closed = false;
  try {
    await fill(fh);
    await fh.sync();
    await fh.close();
    closed = true;
    await rename(tmp, path);
  } catch (e) {
    if (!closed) await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
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

/** Atomically replace `path` with a string or byte buffer. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  await writeAtomic(path, (fh) => writeFully(fh, bytes, 0));
}
