// Finds model weights for `eval`, `export` and `sft`: a run directory (newest good checkpoint), one
// checkpoint directory, or a plain HF model directory, and the tokenizer stored with them (or with
// the weights a `maso train` run started from). Reads and verifies; never writes.
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { MANIFEST_FILE } from "../checkpoint/paths.js";
import { type VerifiedCheckpoint, findCheckpoint, verifyCheckpoint } from "../checkpoint/read-checkpoint.js";
import { createByteTokenizer } from "../engine/tokenizer/byte-tokenizer.js";
import { loadTokenizer, type SavableTokenizer } from "../engine/tokenizer/load-tokenizer.js";
import { checkTokenizerFits } from "../engine/tokenizer/tokenizer-fit.js";
import { MasoError } from "../errors.js";

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
  describe: string;
}

/** Decoder parts of a checkpoint: the parts with an hf/config.json. */
function decoderParts(ck: VerifiedCheckpoint): string[] {
  return ck.manifest.parts.filter((p) => `${p}/hf/config.json` in ck.manifest.files);
}

/**
 * Resolves `path` (run dir, checkpoint dir or HF dir) to model files; `part` picks the model in a
 * multi-model checkpoint, `step` a specific checkpoint of a run.
 */
export async function findModel(path: string, opts: { part?: string; step?: number } = {}): Promise<ModelSource> {
  let ck: VerifiedCheckpoint | null = null;
  if (existsSync(join(path, MANIFEST_FILE))) ck = await verifyCheckpoint(path);
  else if (existsSync(join(path, "checkpoints"))) ck = await findCheckpoint(path, { step: opts.step, fallback: opts.step === undefined });
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
  const parts = decoderParts(ck);
  const part = opts.part ?? (parts.length === 1 ? parts[0] : undefined);
  if (!part || !parts.includes(part))
    throw new MasoError(
      "MODEL_NOT_FOUND",
      `${ck.dir}: ${part ? `no model part '${part}'` : "several models"}; models: ${parts.join(", ") || "none"}`,
      "choose one with --model <name>",
    );
  const adapters: Record<string, string> = {};
  for (const f of Object.keys(ck.manifest.files)) {
    const m = new RegExp(`^${part}/adapters/([^/]+)/adapter_config\\.json$`).exec(f);
    if (m) adapters[m[1]] = join(ck.dir, part, "adapters", m[1]);
  }
  return {
    hfDir: join(ck.dir, part, "hf"),
    adapters,
    checkpoint: ck,
    ...runWeights(ck.dir, part),
    describe: `${ck.dir} (model '${part}', step ${ck.step})`,
  };
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return v !== null && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `weights` directory of the run config's model behind checkpoint part `part` (worker.json
 * names the model; a part without one is named after it). Resolved from the working directory, as
 * `maso train` does; a run written without a config (library use) has none.
 */
function runWeights(ckDir: string, part: string): Pick<ModelSource, "baseDir" | "baseTrained"> {
  const checkpoints = dirname(resolve(ckDir));
  if (basename(checkpoints) !== "checkpoints") return {};
  const config = readJson(join(dirname(checkpoints), "config.json"));
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
