// Writes one run checkpoint atomically: every part saves into <runDir>/checkpoints/.tmp-<pid>-<step>
// (named with the writer's pid, so a writer only ever cleans up its own or a dead process's), files
// are hashed into manifest.json, everything is fsynced, then the directory is renamed to step-<step>.
// A crash at any moment leaves either no step directory or a complete one. Old checkpoints beyond
// `keep` are renamed to .trash-* before deletion, never deleted in place; `protect`ed steps (the
// best-on-dev checkpoint) are never pruned.
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { processGone, tempOwner, writeFileAtomic } from "../fs/atomic-file.js";
import { asDiskError } from "../fs/disk-error.js";
import { writeSafetensors } from "../engine/io/safetensors.js";
import { MasoError } from "../errors.js";
import { fsyncPath, hashFile, listDirsRecursive, listFilesRecursive } from "../fs/fs-util.js";
import { MANIFEST_FILE, checkPartName, checkpointsDir, listCheckpoints, stepDirName } from "./paths.js";
import type { CheckpointManifest, Checkpointable, PartWriter } from "./types.js";

export interface WriteCheckpointOptions {
  /** Keep this many newest checkpoints; older ones are removed after the new one is committed. */
  keep?: number;
  /** Steps never pruned by `keep` (e.g. the checkpoint the best pointer names). */
  protect?: readonly number[];
  /** Free-form values stored in the manifest (small JSON). */
  meta?: Record<string, unknown>;
  /**
   * Called after every part is written and before the manifest and rename. For fault-injection
   * tests (a kill landing mid-write); leave unset otherwise.
   */
  beforeCommit?: (tmpDir: string) => Promise<void>;
}

/** The committed checkpoint. */
export interface WrittenCheckpoint {
  step: number;
  dir: string;
  manifest: CheckpointManifest;
}

/** A writer into one part's directory (worker processes write their own part of a checkpoint). */
export function partWriter(dir: string): PartWriter {
  const inside = (file: string) => {
    if (file.includes("..") || file.startsWith("/"))
      throw new MasoError("CHECKPOINT_PART_FILE", `checkpoint part file ${JSON.stringify(file)} must be a relative path inside the part`);
    return join(dir, file);
  };
  const ensure = async (path: string) => mkdir(join(path, ".."), { recursive: true });
  return {
    dir,
    async tensors(file, tensors) {
      const p = inside(file);
      await ensure(p);
      await writeSafetensors(p, tensors, { dtype: "F32" });
    },
    async json(file, value) {
      const p = inside(file);
      await ensure(p);
      await writeFileAtomic(p, `${JSON.stringify(value)}\n`);
    },
  };
}

/**
 * The pid that left `name` in the checkpoints folder: a number for .tmp-<pid>-<step>, .trash-<step>-<pid>-<time>
 * and atomic temp files (the best pointer's), null for a leftover of an older maso that named no pid,
 * undefined for anything that is not a leftover.
 */
function leftoverOwner(name: string): number | null | undefined {
  const tmp = /^\.tmp-(?:(\d+)-)?step-\d+$/.exec(name);
  if (tmp) return tmp[1] === undefined ? null : Number(tmp[1]);
  const trash = /^\.trash-.*-(\d+)-\d+$/.exec(name);
  if (trash) return Number(trash[1]);
  return tempOwner(name) ?? undefined;
}

/**
 * Removes leftovers of interrupted writes and deletions (.tmp-*, .trash-*, a best pointer's temp
 * file) made by this process or by processes that no longer exist; returns their names.
 */
export async function cleanCheckpointLeftovers(runDir: string): Promise<string[]> {
  const root = checkpointsDir(runDir);
  let names: string[] = [];
  try {
    names = await readdir(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const stale = names.filter((n) => {
    const pid = leftoverOwner(n);
    return pid === null || (pid !== undefined && (pid === process.pid || processGone(pid)));
  });
  for (const n of stale) await rm(join(root, n), { recursive: true, force: true });
  return stale;
}

/** Moves a directory out of the step-* namespace in one rename, then deletes it. */
async function retire(root: string, dir: string, name: string): Promise<void> {
  const trash = join(root, `.trash-${name}-${process.pid}-${Date.now()}`);
  await rename(dir, trash);
  await fsyncPath(root);
  await rm(trash, { recursive: true, force: true });
}

/**
 * Saves every part into a new checkpoint for `step`, atomically, then prunes to the newest `keep`.
 * @example
 * await writeCheckpoint("runs/a", 10, [decoderPart("model", model), adamwPart("optimizer", opt)], { keep: 3 });
 */
export async function writeCheckpoint(
  runDir: string,
  step: number,
  parts: readonly Checkpointable[],
  opts: WriteCheckpointOptions = {},
): Promise<WrittenCheckpoint> {
  const name = stepDirName(step);
  const seen = new Set<string>();
  for (const p of parts) {
    checkPartName(p.name);
    if (seen.has(p.name))
      throw new MasoError("CHECKPOINT_PART_NAME", `checkpoint part '${p.name}' given twice`, "give every part a unique name");
    seen.add(p.name);
  }
  const keep = opts.keep ?? Number.POSITIVE_INFINITY;
  if (!(keep >= 1)) throw new MasoError("CHECKPOINT_KEEP", `keep must be >= 1, got ${keep}`);
  const root = checkpointsDir(runDir);
  const tmp = join(root, `.tmp-${process.pid}-${name}`);
  try {
    return await commitCheckpoint(runDir, step, parts, opts, tmp, keep);
  } catch (e) {
    throw asDiskError(e, tmp, "error");
  }
}

async function commitCheckpoint(
  runDir: string,
  step: number,
  parts: readonly Checkpointable[],
  opts: WriteCheckpointOptions,
  tmp: string,
  keep: number,
): Promise<WrittenCheckpoint> {
  const root = checkpointsDir(runDir);
  const name = stepDirName(step);
  await mkdir(root, { recursive: true });
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp);

  for (const p of parts) {
    const dir = join(tmp, p.name);
    await mkdir(dir);
    await p.save(partWriter(dir));
  }
  await opts.beforeCommit?.(tmp);

  const files: CheckpointManifest["files"] = {};
  for (const rel of await listFilesRecursive(tmp)) {
    if (rel === MANIFEST_FILE) continue;
    files[rel] = await hashFile(join(tmp, rel));
  }
  const manifest: CheckpointManifest = {
    format: "maso-checkpoint",
    version: 1,
    step,
    createdAt: new Date().toISOString(),
    parts: parts.map((p) => p.name),
    files,
    meta: opts.meta ?? {},
  };
  await writeFileAtomic(join(tmp, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const d of await listDirsRecursive(tmp)) await fsyncPath(join(tmp, d));
  await fsyncPath(tmp);

  const final = join(root, name);
  const existing = (await listCheckpoints(runDir)).find((c) => c.step === step);
  if (existing) await retire(root, existing.dir, name);
  await rename(tmp, final);
  await fsyncPath(root);

  await pruneCheckpoints(runDir, keep, opts.protect);
  return { step, dir: final, manifest };
}

/**
 * Removes all but the newest `keep` checkpoints, sparing `protect`ed steps as well. Each removal is
 * a rename to .trash-* first, so a crash never leaves a partial step directory.
 * @example
 * await pruneCheckpoints("runs/a", 2, [best.step]);
 */
export async function pruneCheckpoints(runDir: string, keep: number, protect: readonly number[] = []): Promise<void> {
  const root = checkpointsDir(runDir);
  const all = await listCheckpoints(runDir);
  for (const old of all.slice(0, Math.max(0, all.length - keep)))
    if (!protect.includes(old.step)) await retire(root, old.dir, stepDirName(old.step));
}
