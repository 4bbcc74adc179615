// Small filesystem helpers for durable checkpoints: hashing a file, fsync of files and directories,
// and recursive listing. Never deletes or renames anything.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";

/** sha256 (hex) and size of a file, streamed. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const h = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    h.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
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
