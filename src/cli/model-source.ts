// Finds model weights for `eval`, `export` and `sft`: a run directory (newest good checkpoint), one
// checkpoint directory, or a plain HF model directory, and the tokenizer stored with them (or with
// the weights a `maso train` run started from). Reads and verifies; never writes.
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { MANIFEST_FILE } from "../checkpoint/paths.js";
import { type VerifiedCheckpoint, findCheckpoint, verifyCheckpoint } from "../checkpoint/read-checkpoint.js";
import { loadHfModel } from "../engine/io/hf-model.js";
import { loadAdapter } from "../engine/io/peft.js";
import { Decoder } from "../engine/model/decoder.js";
import { createByteTokenizer } from "../engine/tokenizer/byte-tokenizer.js";
import { loadTokenizer, type SavableTokenizer } from "../engine/tokenizer/load-tokenizer.js";
import { checkTokenizerFits } from "../engine/tokenizer/tokenizer-fit.js";
import { MasoError } from "../errors.js";
import { readRegularFileSync } from "../fs/fs-util.js";

export interface ModelSource {
  /** HF model directory (config.json + safetensors) */
  hfDir: string;
  /** PEFT adapter directories of that model, by adapter name */
  adapters: Record<string, string>;
  /** the verified checkpoint it came from, if any */
  checkpoint: VerifiedCheckpoint | null;
  /**
   * The weights directory the run's model started from (its config's `models.<name>.weights`,
   * absolute), where its tokenizer files live; undefined for preset models and plain HF folders.
   */
  baseDir?: string;
  /** The run trained the base weights too, so the checkpoint's `hf/` no longer equals {@link baseDir}. */
  baseTrained?: boolean;
  /** The model's name in the run config (a checkpoint part without one: the part's name); undefined for an HF folder. */
  model?: string;
  describe: string;
}

/** A model stored in a checkpoint: its part directory and the name the run config gives it. */
export interface CheckpointModel {
  part: string;
  name: string;
}

/**
 * The models of a checkpoint (its parts with an hf/config.json), each named as the run config names
 * it: worker.json's `model`, else the part's own name. Part names (`wg0-base`) stay on disk.
 * @example const names = checkpointModels(ck).map((m) => m.name); // ["base"]
 */
export function checkpointModels(ck: VerifiedCheckpoint): CheckpointModel[] {
  return ck.manifest.parts
    .filter((p) => `${p}/hf/config.json` in ck.manifest.files)
    .map((part) => {
      const name = readJson(join(ck.dir, part, "worker.json"))?.model;
      return { part, name: typeof name === "string" ? name : part };
    });
}

/** The adapter directories of model part `part` in a checkpoint, by adapter name. */
export function checkpointAdapters(ck: VerifiedCheckpoint, part: string): Record<string, string> {
  const adapters: Record<string, string> = {};
  const prefix = `${part}/adapters/`;
  for (const f of Object.keys(ck.manifest.files)) {
    if (!f.startsWith(prefix)) continue;
    const m = /^([^/]+)\/adapter_config\.json$/.exec(f.slice(prefix.length));
    if (m) adapters[m[1]] = join(ck.dir, part, "adapters", m[1]);
  }
  return adapters;
}

/**
 * Loads the checkpoint a run or checkpoint directory names (`step`: that one, else the newest good
 * one); null for a folder that is neither.
 */
export async function sourceCheckpoint(path: string, step?: number): Promise<VerifiedCheckpoint | null> {
  if (existsSync(join(path, MANIFEST_FILE))) return verifyCheckpoint(path);
  if (existsSync(join(path, "checkpoints"))) return findCheckpoint(path, { step, fallback: step === undefined });
  return null;
}

/**
 * Resolves `path` (run dir, checkpoint dir or HF dir) to model files; `part` picks the model in a
 * multi-model checkpoint by its config name (or its part directory's name), `step` a specific
 * checkpoint of a run.
 */
export async function findModel(path: string, opts: { part?: string; step?: number } = {}): Promise<ModelSource> {
  const ck = await sourceCheckpoint(path, opts.step);
  if (!ck) {
    if (
      existsSync(join(path, "config.json")) &&
      (existsSync(join(path, "model.safetensors")) || existsSync(join(path, "model.safetensors.index.json")))
    )
      return { hfDir: path, adapters: {}, checkpoint: null, describe: path };
    throw new MasoError(
      "MODEL_NOT_FOUND",
      `${path} is not a run directory, a checkpoint or an HF model directory`,
      "pass a run directory with checkpoints/, a checkpoints/step-NNNNNN directory, or an HF model folder",
    );
  }
  const models = checkpointModels(ck);
  const want = opts.part;
  const found =
    want === undefined
      ? models.length === 1
        ? models[0]
        : undefined
      : (models.find((m) => m.name === want) ?? models.find((m) => m.part === want));
  if (!found)
    throw new MasoError(
      "MODEL_NOT_FOUND",
      `${ck.dir}: ${want ? `no model '${want}'` : "several models"}; models: ${models.map((m) => m.name).join(", ") || "none"}`,
      "choose one with --model <name>",
    );
  return modelSource(ck, found);
}

/** The {@link ModelSource} of one model of a verified checkpoint. */
export function modelSource(ck: VerifiedCheckpoint, m: CheckpointModel): ModelSource {
  return {
    hfDir: join(ck.dir, m.part, "hf"),
    adapters: checkpointAdapters(ck, m.part),
    checkpoint: ck,
    ...runWeights(ck.dir, m.part),
    model: m.name,
    describe: `${ck.dir} (model '${m.name}', step ${ck.step})`,
  };
}

/** The run directory a checkpoint directory belongs to (`<run>/checkpoints/step-N`), or undefined. */
export function runOfCheckpoint(ckDir: string): string | undefined {
  const checkpoints = dirname(resolve(ckDir));
  return basename(checkpoints) === "checkpoints" ? dirname(checkpoints) : undefined;
}

/**
 * A JSON object file's contents; undefined when it is missing, unreadable or not an object. A FIFO,
 * device or oversized file in its place is a named error (FS_NOT_REGULAR_FILE, FS_FILE_TOO_LARGE),
 * never a read that blocks.
 */
export function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readRegularFileSync(path, "utf8", { maxBytes: 16 * 1024 * 1024 })) as unknown;
    return v !== null && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch (e) {
    if (e instanceof MasoError) throw e;
    return undefined;
  }
}

/**
 * The `weights` directory of the run config's model behind checkpoint part `part` (worker.json
 * names the model; a part without one is named after it). Resolved from the working directory, as
 * `maso train` does; a run written without a config (library use) has none.
 */
function runWeights(ckDir: string, part: string): Pick<ModelSource, "baseDir" | "baseTrained"> {
  const run = runOfCheckpoint(ckDir);
  if (run === undefined) return {};
  const config = readJson(join(run, "config.json"));
  const name = readJson(join(ckDir, part, "worker.json"))?.model ?? part;
  const models = config?.models as Record<string, { weights?: unknown; trainBase?: unknown; lora?: unknown }> | undefined;
  const m = typeof name === "string" ? models?.[name] : undefined;
  if (typeof m?.weights !== "string") return {};
  // the run config's default: the base trains without LoRA, stays frozen with it
  return { baseDir: resolve(m.weights), baseTrained: typeof m.trainBase === "boolean" ? m.trainBase : !m.lora };
}

/** A model's tokenizer and the directory its files came from (undefined: the built-in byte tokenizer). */
export interface FoundTokenizer {
  tokenizer: SavableTokenizer;
  dir?: string;
}

/** What an export says of its tokenizer: which one it wrote, or how to give one. */
export function tokenizerNote(tok: FoundTokenizer | null): string {
  if (!tok) return "no tokenizer found, pass --tokenizer <dir>";
  return tok.tokenizer.kind === "maso-byte" ? "byte tokenizer" : `tokenizer from ${tok.dir}`;
}

/** The source's model as a Decoder (base frozen) with its adapters `names` attached from their PEFT folders. */
export async function loadWithAdapters(source: ModelSource, names: readonly string[]) {
  const { config, params } = await loadHfModel(source.hfDir);
  const model = new Decoder(config, params, { trainBase: false });
  for (const name of names) {
    const ad = await loadAdapter(source.adapters[name], config);
    model.addAdapter(name, ad.lora, ad.params);
  }
  return { config, params, model };
}

/**
 * The tokenizer stored with a model: the files in `dir` when given, else its own tokenizer files,
 * else those of the weights its run started from ({@link ModelSource.baseDir}), else the byte
 * tokenizer for a byte-vocabulary model (null otherwise). A malformed tokenizer is an error, not
 * "no tokenizer", and one that does not fit the model's vocabulary is TOKENIZER_MISMATCH.
 * @example
 * const found = await findTokenizer(source, config.vocabSize);
 */
export async function findTokenizer(source: ModelSource, vocabSize: number, dir?: string): Promise<FoundTokenizer | null> {
  let found: FoundTokenizer | null = null;
  for (const d of dir !== undefined ? [dir] : [source.hfDir, source.baseDir]) {
    if (d === undefined) continue;
    try {
      found = { tokenizer: await loadTokenizer(d), dir: d };
      break;
    } catch (e) {
      if (!(e instanceof MasoError) || e.code !== "TOKENIZER_NOT_FOUND" || dir !== undefined) throw e;
    }
  }
  if (!found) {
    const byte = createByteTokenizer();
    found = vocabSize === byte.vocabSize ? { tokenizer: byte } : null;
  }
  if (found) {
    const where = found.dir === undefined || found.dir === source.hfDir ? source.describe : found.dir;
    checkTokenizerFits(found.tokenizer, vocabSize, { tokenizer: where, model: `${join(source.hfDir, "config.json")}` });
  }
  return found;
}

/**
 * The tokenizer of {@link findTokenizer}, without where it came from.
 * @example
 * const tok = await modelTokenizer(source, config.vocabSize);
 */
export async function modelTokenizer(source: ModelSource, vocabSize: number): Promise<SavableTokenizer | null> {
  return (await findTokenizer(source, vocabSize))?.tokenizer ?? null;
}
