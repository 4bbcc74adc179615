// The contract between run checkpoints and whatever owns trainable state (a pretraining loop, a
// worker group, the RL trainer): each owner is a named part that saves into and loads from its
// own subdirectory. Types only; writing, verifying and pruning live in the other files.
import type { TensorToWrite } from "../engine/io/safetensors.js";

/** Where a part writes its files; every path is relative to the part's own directory. */
export interface PartWriter {
  /** Absolute path of the part's directory (inside the temporary checkpoint directory). */
  readonly dir: string;
  /** Writes float32 tensors to `<dir>/<file>` as safetensors (exact, F32). */
  tensors(file: string, tensors: readonly TensorToWrite[]): Promise<void>;
  /** Writes a JSON value to `<dir>/<file>`. */
  json(file: string, value: unknown): Promise<void>;
}

/** Reads a part's files back from a checkpoint whose hashes were already verified. */
export interface PartReader {
  /** Absolute path of the part's directory. */
  readonly dir: string;
  /** Reads every tensor of `<dir>/<file>`, by name. */
  tensors(file: string): Promise<Map<string, Float32Array>>;
  /** Reads and parses `<dir>/<file>`. */
  json(file: string): Promise<unknown>;
}

/**
 * Anything whose state belongs in a run checkpoint. `name` becomes a subdirectory, so it must be
 * a short lowercase identifier, unique within one checkpoint.
 * @example
 * const counter: Checkpointable = {
 *   name: "counter",
 *   save: (w) => w.json("state.json", { n }),
 *   load: async (r) => { n = ((await r.json("state.json")) as { n: number }).n; },
 * };
 */
export interface Checkpointable {
  readonly name: string;
  save(writer: PartWriter): Promise<void>;
  load(reader: PartReader): Promise<void>;
}

/** One file of a checkpoint, as the manifest lists it. */
export interface ManifestFile {
  bytes: number;
  sha256: string;
}

/** manifest.json: written last, it is what makes a checkpoint directory complete. */
export interface CheckpointManifest {
  format: "maso-checkpoint";
  version: 1;
  step: number;
  createdAt: string;
  /** part names in save order */
  parts: string[];
  /** every other file of the checkpoint, by path relative to it (forward slashes) */
  files: Record<string, ManifestFile>;
  /** small free-form values the caller wants to find without loading parts (e.g. metrics offset) */
  meta: Record<string, unknown>;
}
