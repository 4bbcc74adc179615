// Physical model declarations: where the weights come from (a config to initialise, a checkpoint
// directory, or an existing Decoder), how they train (full, LoRA, frozen), the critic and the KL
// reference. Loading lives here too; nothing in this file knows about roles (see cast-map.ts).
import { join } from "node:path";
import type { LoraConfig, ModelConfig } from "../../engine/config.js";
import { readHfConfig } from "../../engine/io/hf-config.js";
import { loadHfModel } from "../../engine/io/hf-model.js";
import { loadRewardHead } from "../../engine/io/reward-head.js";
import type { ValueHead } from "../../engine/model/value-head.js";
import { Decoder } from "../../engine/model/decoder.js";
import { isPrecisionSetting, type PrecisionSetting, resolvePrecision } from "../../engine/precision.js";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { loadTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import { checkTokenizerFits } from "../../engine/tokenizer/tokenizer-fit.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { MasoError } from "../../errors.js";
import { type Precision, native } from "../../native/binding.js";
import type { TrainMode } from "../protocol/cast-map.js";

/** Where a model's weights come from. */
export type ModelSource =
  /** Fresh weights for this architecture (tests, from-scratch runs). */
  | { config: ModelConfig; seed?: number }
  /** An HF model directory (config.json + safetensors); its tokenizer is loaded from the same place. */
  | { weights: string }
  /** An existing engine model, used as is (e.g. after an SFT warm start). */
  | { decoder: Decoder };

/** Declares one physical model. */
export interface ModelSpec {
  /** Unique name; casts and sample handles refer to it. */
  name: string;
  source: ModelSource;
  /** Default: "lora" when `lora` is set, else "full". */
  train?: TrainMode;
  /** LoRA settings for every adapter the cast puts on this model. */
  lora?: LoraConfig;
  /** Critic: a value head MLP on the last hidden state (needed by gae-action / gae-token). */
  valueHead?: { hidden: number; detach?: boolean };
  /**
   * KL reference. "auto" (default): the base with the adapter disabled for LoRA models, none for
   * full fine-tuning. "frozen-copy": a frozen copy of the initial weights (full fine-tuning only).
   */
  reference?: "auto" | "frozen-copy" | "none";
  /** Tokenizer (default: the byte tokenizer, or the checkpoint's own). */
  tokenizer?: Tokenizer;
  /** Seeds LoRA and value-head initialisation (default 0). */
  seed?: number;
  /**
   * GEMM operand precision of this model's forward, backward and decode steps (default "auto":
   * bf16 where the CPU runs it natively and reproducibly, else fp32).
   */
  precision?: PrecisionSetting;
}

/** A model after validation, with defaults applied. */
export interface ResolvedModelSpec extends Omit<ModelSpec, "train" | "reference" | "precision"> {
  train: TrainMode;
  reference: "adapter-off" | "frozen-copy" | "none";
  precision: Precision;
}

/**
 * Checks one model declaration and fills its defaults.
 *
 * @example
 * resolveModelSpec({ name: "base", source: { config }, lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj"] } });
 */
export function resolveModelSpec(spec: ModelSpec): ResolvedModelSpec {
  const where = `model "${String(spec?.name)}"`;
  if (typeof spec?.name !== "string" || !/^[A-Za-z0-9_.-]+$/.test(spec.name))
    throw new MasoError("MODEL_SPEC", `${where}: name must be letters, digits, _ . -`, "name models like 'policy' or 'qwen-0.5b'");
  const s = spec.source as Record<string, unknown> | undefined;
  if (!s || !("config" in s || "weights" in s || "decoder" in s))
    throw new MasoError(
      "MODEL_SPEC",
      `${where}: source must be { config }, { checkpoint } or { decoder }`,
      "say where the weights come from",
    );
  const train = spec.train ?? (spec.lora ? "lora" : "full");
  if (!["full", "lora", "frozen"].includes(train))
    throw new MasoError("MODEL_SPEC", `${where}: train is "${train}"`, "use one of full, lora, frozen");
  if (train === "lora" && !spec.lora)
    throw new MasoError("MODEL_SPEC", `${where}: train is "lora" but no lora settings are given`, "add lora: { rank, alpha, targets }");
  const ref = spec.reference ?? "auto";
  if (!["auto", "frozen-copy", "none"].includes(ref))
    throw new MasoError("MODEL_SPEC", `${where}: reference is "${ref}"`, "use one of auto, frozen-copy, none");
  if (ref === "frozen-copy" && train === "lora")
    throw new MasoError("MODEL_SPEC", `${where}: a LoRA model's reference is its base with the adapter off`, "use reference: 'auto'");
  const reference = ref === "auto" ? (train === "lora" ? "adapter-off" : "none") : ref;
  if (spec.precision !== undefined && !isPrecisionSetting(spec.precision))
    throw new MasoError("MODEL_SPEC", `${where}: precision is "${spec.precision}"`, "use auto, fp32 or bf16");
  const precision = resolvePrecision(spec.precision ?? "auto");
  if (precision === "bf16" && !native().bf16().onednn)
    throw new MasoError(
      "BF16_UNAVAILABLE",
      `${where}: precision is "bf16" but the native addon was built without oneDNN`,
      "install oneDNN (Debian/Ubuntu: apt-get install libdnnl-dev) and rebuild the addon with `npm run install`, or use precision fp32",
    );
  return { ...spec, train, reference, precision };
}

/**
 * Builds the engine model and tokenizer of a declaration (trainable base only for "full"). A
 * tokenizer that can produce ids beyond the model's vocabulary is refused before any weights are
 * read (TOKENIZER_MISMATCH). A model directory with a reward head (`maso rm train`) brings it as
 * `rewardHead`, kept apart from any critic value head.
 */
export async function loadModel(
  spec: ResolvedModelSpec,
): Promise<{ decoder: Decoder; tokenizer: Tokenizer; rewardHead: ValueHead | null }> {
  const src = spec.source;
  const model = `model "${spec.name}"`;
  const given = `${model} (${spec.tokenizer ? "its tokenizer option" : "the byte tokenizer"})`;
  let decoder: Decoder;
  let tokenizer = spec.tokenizer ?? createByteTokenizer();
  let rewardHead: ValueHead | null = null;
  if ("decoder" in src) {
    decoder = src.decoder;
    checkTokenizerFits(tokenizer, decoder.config.vocabSize, { tokenizer: given, model });
  } else if ("config" in src) {
    checkTokenizerFits(tokenizer, src.config.vocabSize, { tokenizer: given, model });
    decoder = new Decoder(src.config, undefined, { seed: src.seed ?? 0 });
  } else {
    const dir = src.weights;
    const { vocabSize } = await readHfConfig(dir);
    tokenizer = spec.tokenizer ?? (await loadTokenizer(dir));
    checkTokenizerFits(tokenizer, vocabSize, { tokenizer: spec.tokenizer ? given : dir, model: `${model} (${join(dir, "config.json")})` });
    const { config, params } = await loadHfModel(dir);
    decoder = new Decoder(config, params, { seed: spec.seed ?? 0 });
    rewardHead = await loadRewardHead(dir, config.hiddenSize);
  }
  decoder.setTrainBase(spec.train === "full");
  decoder.precision = spec.precision;
  return { decoder, tokenizer, rewardHead };
}
