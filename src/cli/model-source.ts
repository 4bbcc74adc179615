// Finds model weights for `eval`, `export` and `sft`: a run directory (newest good checkpoint), one
// checkpoint directory, or a plain HF model directory, and the tokenizer stored with them. Reads
// and verifies; never writes.
import { existsSync } from "node:fs";
import { join } from "node:path";
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
  return { hfDir: join(ck.dir, part, "hf"), adapters, checkpoint: ck, describe: `${ck.dir} (model '${part}', step ${ck.step})` };
}

/**
 * The tokenizer stored with a model: its own tokenizer files, or, when there are none, the byte
 * tokenizer for a byte-vocabulary model (null otherwise). A malformed tokenizer is an error, not
 * "no tokenizer", and one that does not fit the model's vocabulary is TOKENIZER_MISMATCH.
 * @example
 * const tok = await modelTokenizer(source, config.vocabSize);
 */
export async function modelTokenizer(source: ModelSource, vocabSize: number): Promise<SavableTokenizer | null> {
  let tok: SavableTokenizer | null;
  try {
    tok = await loadTokenizer(source.hfDir);
  } catch (e) {
    if (!(e instanceof MasoError) || e.code !== "TOKENIZER_NOT_FOUND") throw e;
    const byte = createByteTokenizer();
    tok = vocabSize === byte.vocabSize ? byte : null;
  }
  if (tok) checkTokenizerFits(tok, vocabSize, { tokenizer: source.describe, model: `${join(source.hfDir, "config.json")}` });
  return tok;
}
