// Small filesystem helpers: reading files of run and model directories without ever blocking on a
// FIFO or a device (open non-blocking, then refuse anything but a regular file), hashing a file,
// fsync of files and directories, recursive listing, and naming common I/O failures. Never deletes
// or renames anything.
import { createHash } from "node:crypto";
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { type FileHandle, open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ErrorCode } from "../error-codes.js";
import { MasoError } from "../errors.js";

// O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer (0 where the
// platform has no such flag); on a regular file it changes nothing.
const OPEN_READ = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0) | (fsConstants.O_NOCTTY ?? 0);

/** What kind of filesystem entry a stat result is, in words for messages. */
function kindOf(s: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isDirectory(): boolean;
}) {
  if (s.isDirectory()) return "a directory";
  if (s.isFIFO()) return "a FIFO (named pipe)";
  if (s.isSocket()) return "a socket";
  if (s.isCharacterDevice() || s.isBlockDevice()) return "a device";
  return "not a regular file";
}

function notRegular(path: string, kind: string): MasoError {
  return new MasoError(
    "FS_NOT_REGULAR_FILE",
    `${path} is ${kind}, not a regular file`,
    "maso reads only regular files from run and model directories; replace it with the file it should be",
  );
}

function tooLarge(path: string, bytes: number, maxBytes: number): MasoError {
  return new MasoError(
    "FS_FILE_TOO_LARGE",
    `${path} has ${bytes} bytes, more than the ${maxBytes} allowed here`,
    "check the file is the one meant",
  );
}

export interface ReadRegularOptions {
  /** refuse files larger than this (FS_FILE_TOO_LARGE) */
  maxBytes?: number;
}

/**
 * Opens `path` for reading without blocking (a FIFO opens at once) and checks it is a regular file.
 * Errors: FS_NOT_REGULAR_FILE for a FIFO, socket, device or directory; FS_FILE_TOO_LARGE past
 * `maxBytes`; open's own error (ENOENT, EACCES, …) otherwise. The caller closes the handle.
 * @example
 * const fh = await openRegularFile("runs/a/metrics.jsonl"); try { … } finally { await fh.close(); }
 */
export async function openRegularFile(path: string, opts: ReadRegularOptions = {}): Promise<FileHandle> {
  const fh = await open(path, OPEN_READ);
  try {
    const s = await fh.stat();
    if (!s.isFile()) throw notRegular(path, kindOf(s));
    if (opts.maxBytes !== undefined && s.size > opts.maxBytes) throw tooLarge(path, s.size, opts.maxBytes);
    return fh;
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
}

/**
 * Reads a whole regular file; refuses FIFOs, sockets, devices and directories (see {@link openRegularFile}).
 * Use it for every file read from a run or model directory.
 * @example
 * const text = await readRegularFile(join(runDir, "config.json"), "utf8");
 */
export async function readRegularFile(path: string, encoding: BufferEncoding, opts?: ReadRegularOptions): Promise<string>;
export async function readRegularFile(path: string, encoding?: undefined, opts?: ReadRegularOptions): Promise<Buffer>;
export async function readRegularFile(path: string, encoding?: BufferEncoding, opts: ReadRegularOptions = {}): Promise<string | Buffer> {
  const fh = await openRegularFile(path, opts);
  try {
    const bytes = await fh.readFile();
    return encoding ? bytes.toString(encoding) : bytes;
  } finally {
    await fh.close();
  }
}

/** The synchronous {@link readRegularFile}, for code that already reads synchronously. */
export function readRegularFileSync(path: string, encoding: BufferEncoding, opts?: ReadRegularOptions): string;
export function readRegularFileSync(path: string, encoding?: undefined, opts?: ReadRegularOptions): Buffer;
export function readRegularFileSync(path: string, encoding?: BufferEncoding, opts: ReadRegularOptions = {}): string | Buffer {
  const fd = openSync(path, OPEN_READ);
  try {
    const s = fstatSync(fd);
    if (!s.isFile()) throw notRegular(path, kindOf(s));
    if (opts.maxBytes !== undefined && s.size > opts.maxBytes) throw tooLarge(path, s.size, opts.maxBytes);
    const chunks: Buffer[] = [];
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.max(64 * 1024, Math.min(s.size + 1, 16 * 1024 * 1024)));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
    }
    const bytes = Buffer.concat(chunks);
    return encoding ? bytes.toString(encoding) : bytes;
  } finally {
    closeSync(fd);
  }
}

/**
 * The entries under `dir` (down to `depth` levels of subdirectories, leaving out subdirectories
 * named in `skip`) that are neither regular files nor directories — FIFOs, sockets, devices,
 * symlinks to them — as paths. Stats only; never opens one.
 * @example
 * const odd = await specialFilesUnder("runs/a", 4); // ["runs/a/checkpoints/step-000002/manifest.json"]
 */
export async function specialFilesUnder(dir: string, depth: number, skip: readonly string[] = []): Promise<string[]> {
  const out: string[] = [];
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const p = join(dir, name);
    const s = await stat(p).catch(() => undefined); // follows symlinks; a dangling one is left to its reader
    if (s === undefined || s.isFile()) continue;
    if (s.isDirectory()) {
      if (depth > 0 && !skip.includes(name)) out.push(...(await specialFilesUnder(p, depth - 1, skip)));
    } else out.push(p);
  }
  return out;
}

/**
 * Throws FS_NOT_REGULAR_FILE naming the first special file under `dir` (see {@link specialFilesUnder}),
 * or `dir` itself when it is one; a command's first step before it reads a run, checkpoint or model
 * directory. A missing `dir` passes (the command's own lookup names it).
 */
export async function refuseSpecialFiles(dir: string, depth: number, skip: readonly string[] = []): Promise<void> {
  let top: ReturnType<typeof statSync> | undefined;
  try {
    top = statSync(dir);
  } catch {
    return; // missing: the command's own lookup names it
  }
  if (!top.isDirectory()) {
    if (!top.isFile()) throw notRegular(dir, kindOf(top));
    return;
  }
  const [first] = await specialFilesUnder(dir, depth, skip);
  if (first !== undefined) {
    const s = statSync(first);
    throw notRegular(first, kindOf(s));
  }
}

// the disk codes are disk-error.ts's (DISK_FULL, DISK_READ_ONLY), with hints for a one-off write
const IO_CODES: Record<string, [code: ErrorCode, what: string, hint: string]> = {
  ENOSPC: ["DISK_FULL", "no space left on the device", "free disk space, or write somewhere else"],
  EDQUOT: ["DISK_FULL", "disk quota exceeded", "free space within the quota, or write somewhere else"],
  EROFS: ["DISK_READ_ONLY", "the file system is read-only", "write somewhere else"],
  EACCES: ["FS_PERMISSION", "permission denied", "check the permissions of the path"],
  EPERM: ["FS_PERMISSION", "operation not permitted", "check the permissions of the path"],
  EISDIR: ["FS_IS_DIRECTORY", "a directory is in the way of a file", "choose a file path, not a directory"],
  ENOTDIR: ["FS_NOT_DIRECTORY", "a file is in the way of a directory", "choose a directory path, not a file"],
  EEXIST: ["FS_EXISTS", "something already exists there", "choose another path"],
};

/**
 * A MasoError naming a failed filesystem operation (ENOSPC → DISK_FULL, EACCES → FS_PERMISSION, …),
 * or `e` itself when it is not such an error. `doing` says what was being done ("writing runs/a/config.json").
 * @example
 * await writeFile(path, text).catch((e) => { throw ioError(e, `writing ${path}`); });
 */
export function ioError(e: unknown, doing: string): unknown {
  if (e instanceof MasoError) return e;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const known = code === undefined ? undefined : IO_CODES[code];
  if (!known) return e;
  const path = (e as NodeJS.ErrnoException).path;
  return new MasoError(known[0], `${doing} failed: ${known[1]}${path ? ` (${path})` : ""}`, known[2]);
}

/** sha256 (hex) and size of a regular file, streamed (a FIFO or device is refused, never read). */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const h = createHash("sha256");
  let bytes = 0;
  const fh = await openRegularFile(path);
  try {
    for await (const chunk of fh.createReadStream({ autoClose: false })) {
      h.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
  } finally {
    await fh.close();
  }
  return { sha256: h.digest("hex"), bytes };
}

/** Flushes a file or directory to disk (directory fsync makes renames inside it durable). */
export async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Every regular file under `dir`, as paths relative to it with forward slashes, sorted. */
export async function listFilesRecursive(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFilesRecursive(dir, rel)));
    else if (e.isFile()) out.push(rel);
  }
  return out.sort();
}

/** Every directory under `dir` (relative, deepest first), for fsync before a rename. */
export async function listDirsRecursive(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    out.push(...(await listDirsRecursive(dir, rel)), rel);
  }
  return out;
}
