// Where `maso export` may write: never onto the folder it exports from nor into a run or checkpoint
// directory, and a folder export only into a new or empty folder. A folder is filled under a
// temporary sibling name and renamed into place at the end, so an interrupted export leaves no
// folder under --out that looks complete.
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { CHECKPOINTS_DIR, MANIFEST_FILE, stepOfDirName } from "../checkpoint/paths.js";
import { MasoError } from "../errors.js";
import { tempPathFor } from "../fs/atomic-file.js";
import { fsyncPath, ioError } from "../fs/fs-util.js";

/** `path` with symlinks resolved as far as it exists (the rest appended), so two spellings compare equal. */
function realish(path: string): string {
  const abs = resolve(path);
  if (existsSync(abs)) return realpathSync(abs);
  const parent = dirname(abs);
  return parent === abs ? abs : join(realish(parent), basename(abs));
}

/**
 * What `dir` is, when a maso run owns it: a checkpoint (step-NNNNNN with a manifest.json) or a run
 * (config.json with checkpoints/ or metrics.jsonl).
 */
function ownedKind(dir: string): "checkpoint" | "run" | undefined {
  if (stepOfDirName(basename(dir)) !== null && existsSync(join(dir, MANIFEST_FILE))) return "checkpoint";
  if (existsSync(join(dir, "config.json")) && (existsSync(join(dir, CHECKPOINTS_DIR)) || existsSync(join(dir, "metrics.jsonl"))))
    return "run";
  return undefined;
}

/**
 * Refuses an --out that would overwrite what maso reads: the source folder itself, or anything
 * inside a run or checkpoint directory (its config.json, its verified files); and an --out of the
 * wrong kind (a directory for one GGUF file, a file for a folder export).
 * Errors: EXPORT_OUT_IS_SOURCE, EXPORT_OUT_IN_RUN, EXPORT_OUT_IS_DIR, EXPORT_OUT_NOT_DIR.
 * @example checkExportOut("export/solver", "runs/demo", "folder");
 */
export function checkExportOut(out: string, src: string, kind: "file" | "folder"): void {
  const target = realish(out);
  if (target === realish(src))
    throw new MasoError("EXPORT_OUT_IS_SOURCE", `--out ${out} is the folder being exported`, "export into a new folder");
  const existing = existsSync(target) ? statSync(target) : undefined;
  if (kind === "file" && existing?.isDirectory())
    throw new MasoError(
      "EXPORT_OUT_IS_DIR",
      `--out ${out} is a directory; GGUF export writes one file`,
      `pass a file path, e.g. ${join(out, "model.gguf")}`,
    );
  if (kind === "folder" && existing && !existing.isDirectory())
    throw new MasoError("EXPORT_OUT_NOT_DIR", `--out ${out} is a file; this export writes a folder`, "pass a directory path");
  for (let dir = kind === "file" ? dirname(target) : target; ; dir = dirname(dir)) {
    const owner = ownedKind(dir);
    if (owner)
      throw new MasoError(
        "EXPORT_OUT_IN_RUN",
        `--out ${out} is inside the ${owner} directory ${dir}; exporting there would overwrite its files`,
        "export into a folder outside every run and checkpoint directory",
      );
    if (dirname(dir) === dir) break;
  }
  if (kind === "folder" && existing && readdirSync(target).length > 0)
    throw new MasoError(
      "EXPORT_OUT_NOT_EMPTY",
      `--out ${out} is a folder that is not empty; an export never mixes its files with others`,
      "export into a new folder, or delete this one first",
    );
}

/**
 * Writes a folder export: `fill` writes into a temporary sibling of `out`, which is then renamed to
 * `out` (a new or empty folder, see {@link checkExportOut}). On failure the sibling is removed; a
 * killed export leaves only the hidden `.<name>.tmp-<pid>-<hex>` sibling, never a partial `out`.
 * @example await writeFolderAtomically("export/cast", async (dir) => saveHfModel(join(dir, "base"), cfg, params));
 */
export async function writeFolderAtomically(out: string, fill: (dir: string) => Promise<void>): Promise<void> {
  const target = resolve(out);
  const tmp = tempPathFor(target);
  try {
    await mkdir(tmp, { recursive: true });
    await fill(tmp);
    // an empty folder at `out` is replaced by the rename; a non-empty one was refused before
    await rename(tmp, target).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "ENOTEMPTY" && e.code !== "EEXIST") throw e;
      throw new MasoError(
        "EXPORT_OUT_NOT_EMPTY",
        `--out ${out} was filled by something else during the export`,
        "export into a new folder",
      );
    });
    await fsyncPath(dirname(target)).catch(() => {});
  } catch (e) {
    await rm(tmp, { recursive: true, force: true }).catch(() => {});
    throw ioError(e, `exporting to ${out}`);
  }
}
