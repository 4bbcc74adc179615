// Verifying and loading run checkpoints: every file listed in the manifest must exist with its
// size and sha256, and no part may be missing, before any part's load() runs. Refuses a corrupt
// or partial checkpoint with CHECKPOINT_CORRUPT; can fall back to the newest good one. Never writes.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { parseSafetensors } from "../engine/io/safetensors.js";
import { MasoError } from "../errors.js";
import { hashFile, listFilesRecursive } from "../fs/fs-util.js";
import { CORRUPT_HINT, parseManifest } from "./manifest.js";
import { MANIFEST_FILE, listCheckpoints, stepOfDirName } from "./paths.js";
import type { CheckpointManifest, Checkpointable, PartReader } from "./types.js";
import { readRegularFile } from "../fs/fs-util.js";

/** A checkpoint whose files all matched their hashes. */
export interface VerifiedCheckpoint {
  step: number;
  dir: string;
  manifest: CheckpointManifest;
  /** Reader for one part's files (throws CHECKPOINT_PARTS when the part is absent). */
  part(name: string): PartReader;
}

function partReader(dir: string, manifest: CheckpointManifest, part: string): PartReader {
  const path = (file: string) => {
    const rel = `${part}/${file}`;
    if (!(rel in manifest.files))
      throw new MasoError("CHECKPOINT_CORRUPT", `${dir}: part '${part}' has no file ${file} in the manifest`, CORRUPT_HINT);
    return join(dir, part, file);
  };
  return {
    dir: join(dir, part),
    async tensors(file) {
      const p = path(file);
      const { tensors } = parseSafetensors(new Uint8Array(await readRegularFile(p)), p);
      const out = new Map<string, Float32Array>();
      for (const [name, t] of tensors) {
        if (!(t.data instanceof Float32Array))
          throw new MasoError("CHECKPOINT_CORRUPT", `${p}: tensor ${name} is ${t.dtype}, expected a float tensor`, CORRUPT_HINT);
        out.set(name, t.data);
      }
      return out;
    },
    async json(file) {
      const p = path(file);
      try {
        return JSON.parse(await readRegularFile(p, "utf8"));
      } catch (e) {
        throw new MasoError("CHECKPOINT_CORRUPT", `${p}: not JSON (${(e as Error).message})`, CORRUPT_HINT);
      }
    },
  };
}

/**
 * A reader for one part of a checkpoint whose files someone else already verified (a worker process
 * loading its part after the controller checked every hash); it still refuses files the manifest
 * does not list.
 */
export async function openPartReader(dir: string, part: string): Promise<PartReader> {
  const where = join(dir, MANIFEST_FILE);
  const text = await readRegularFile(where, "utf8").catch((e: Error) => {
    throw new MasoError(
      "CHECKPOINT_MISSING",
      `cannot read ${where}: ${e.message}`,
      "give workers the run directory at the same path (a shared file system)",
    );
  });
  const manifest = parseManifest(text, dir);
  if (!manifest.parts.includes(part))
    throw new MasoError("CHECKPOINT_PARTS", `${dir} has no part '${part}'`, "was it written by the same kind of run?");
  return partReader(dir, manifest, part);
}

/**
 * Checks a checkpoint directory: manifest present and valid, its step matching the directory name,
 * every listed file present with the recorded size and sha256, and no unlisted files.
 * Throws CHECKPOINT_CORRUPT (or CHECKPOINT_MISSING) naming the first problem.
 * @example
 * const ckpt = await verifyCheckpoint("runs/a/checkpoints/step-000010");
 */
export async function verifyCheckpoint(dir: string): Promise<VerifiedCheckpoint> {
  let text: string;
  try {
    text = await readRegularFile(join(dir, MANIFEST_FILE), "utf8");
  } catch (e) {
    const missingDir = (await stat(dir).catch(() => null)) === null;
    if (missingDir) throw new MasoError("CHECKPOINT_MISSING", `no checkpoint at ${dir}`, "check the run directory and step");
    throw new MasoError(
      "CHECKPOINT_CORRUPT",
      `${dir}: manifest.json is missing or unreadable (${(e as Error).message}); the write did not finish`,
      CORRUPT_HINT,
    );
  }
  const manifest = parseManifest(text, dir);
  const dirStep = stepOfDirName(dir.split(/[\\/]/).filter(Boolean).at(-1) ?? "");
  if (dirStep !== null && dirStep !== manifest.step)
    throw new MasoError(
      "CHECKPOINT_CORRUPT",
      `${dir}: manifest says step ${manifest.step}, the directory name says ${dirStep}`,
      CORRUPT_HINT,
    );
  const present = new Set((await listFilesRecursive(dir)).filter((f) => f !== MANIFEST_FILE));
  for (const [rel, want] of Object.entries(manifest.files)) {
    if (!present.has(rel)) throw new MasoError("CHECKPOINT_CORRUPT", `${dir}: file ${rel} listed in the manifest is missing`, CORRUPT_HINT);
    const got = await hashFile(join(dir, rel));
    if (got.bytes !== want.bytes)
      throw new MasoError(
        "CHECKPOINT_CORRUPT",
        `${dir}: file ${rel} has ${got.bytes} bytes, the manifest says ${want.bytes}`,
        CORRUPT_HINT,
      );
    if (got.sha256 !== want.sha256)
      throw new MasoError("CHECKPOINT_CORRUPT", `${dir}: file ${rel} does not match its sha256 in the manifest`, CORRUPT_HINT);
    present.delete(rel);
  }
  const extra = [...present];
  if (extra.length > 0)
    throw new MasoError("CHECKPOINT_CORRUPT", `${dir}: unexpected file ${extra[0]} not listed in the manifest`, CORRUPT_HINT);
  return {
    step: manifest.step,
    dir,
    manifest,
    part(name) {
      if (!manifest.parts.includes(name))
        throw new MasoError(
          "CHECKPOINT_PARTS",
          `${dir} has no part '${name}' (it has: ${manifest.parts.join(", ")})`,
          "was it written by the same kind of run?",
        );
      return partReader(dir, manifest, name);
    },
  };
}

export interface FindCheckpointOptions {
  /** A specific step; default the newest. */
  step?: number;
  /** When the chosen checkpoint is corrupt, try older ones instead of throwing. Default false. */
  fallback?: boolean;
  /** Told about each corrupt checkpoint skipped by fallback. */
  onSkip?: (dir: string, err: MasoError) => void;
}

/**
 * Finds and verifies a run's checkpoint: the newest (or `step`), optionally falling back to older
 * good ones. Throws CHECKPOINT_NONE when the run has no checkpoint, CHECKPOINT_CORRUPT otherwise.
 * @example
 * const ckpt = await findCheckpoint("runs/a", { fallback: true });
 */
export async function findCheckpoint(runDir: string, opts: FindCheckpointOptions = {}): Promise<VerifiedCheckpoint> {
  const all = await listCheckpoints(runDir);
  let candidates = all.reverse();
  if (opts.step !== undefined) {
    const at = candidates.findIndex((c) => c.step === opts.step);
    if (at < 0)
      throw new MasoError(
        "CHECKPOINT_MISSING",
        `${runDir} has no checkpoint for step ${opts.step}`,
        `available: ${all.map((c) => c.step).join(", ") || "none"}`,
      );
    candidates = candidates.slice(at);
  }
  if (candidates.length === 0)
    throw new MasoError(
      "CHECKPOINT_NONE",
      `${runDir} has no checkpoints`,
      "start the run without --resume, or point at the right run directory",
    );
  let first: MasoError | null = null;
  for (const c of candidates) {
    try {
      return await verifyCheckpoint(c.dir);
    } catch (e) {
      if (!(e instanceof MasoError) || !opts.fallback) throw e;
      first ??= e;
      opts.onSkip?.(c.dir, e);
    }
  }
  throw new MasoError("CHECKPOINT_CORRUPT", `${runDir}: no good checkpoint left (${first?.message})`, CORRUPT_HINT);
}

/**
 * Loads a verified checkpoint into `parts`. The checkpoint must hold exactly these part names.
 * @example
 * await restoreCheckpoint(await findCheckpoint(runDir), [decoderPart("model", model), adamwPart("optimizer", opt)]);
 */
export async function restoreCheckpoint(ckpt: VerifiedCheckpoint, parts: readonly Checkpointable[]): Promise<void> {
  const want = parts.map((p) => p.name).sort();
  const have = [...ckpt.manifest.parts].sort();
  if (want.join("\n") !== have.join("\n"))
    throw new MasoError(
      "CHECKPOINT_PARTS",
      `${ckpt.dir} holds parts [${have.join(", ")}], the run expects [${want.join(", ")}]`,
      "resume with the same configuration that wrote the checkpoint",
    );
  for (const p of parts) await p.load(ckpt.part(p.name));
}
