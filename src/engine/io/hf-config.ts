// Translation between HF transformers' config.json (LlamaForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM) and maso's ModelConfig. Settings the engine does not implement (rope scaling,
// sliding windows, MLP bias, other activations, quantisation) are rejected, never silently dropped.
import { join } from "node:path";
import { MasoError } from "../../errors.js";
import type { Architecture, ModelConfig } from "../config.js";
import { readRegularFile } from "../../fs/fs-util.js";

const ARCH_CLASSES: Record<string, Architecture> = {
  LlamaForCausalLM: "llama",
  Qwen2ForCausalLM: "qwen2",
  Qwen3ForCausalLM: "qwen3",
};
const CLASS_OF: Record<Architecture, string> = { llama: "LlamaForCausalLM", qwen2: "Qwen2ForCausalLM", qwen3: "Qwen3ForCausalLM" };

/** HF's defaults for fields a config.json may omit (from each architecture's Config class). */
const DEFAULTS: Record<Architecture, { maxPositionEmbeddings: number; bosTokenId?: number; eosTokenId?: number }> = {
  llama: { maxPositionEmbeddings: 2048, bosTokenId: 1, eosTokenId: 2 },
  qwen2: { maxPositionEmbeddings: 32768 },
  qwen3: { maxPositionEmbeddings: 32768 },
};

type Json = Record<string, unknown>;

function fail(source: string, what: string, hint = "maso supports dense Llama, Qwen2 and Qwen3 decoders"): MasoError {
  return new MasoError("HF_CONFIG_UNSUPPORTED", `${source}: ${what}`, hint);
}

function positiveInt(raw: Json, key: string, source: string, fallback?: number): number {
  const v = raw[key] ?? fallback;
  if (v === undefined || v === null) {
    throw new MasoError(
      "HF_CONFIG_FIELD",
      `${source}: missing ${key}`,
      "the config.json must come from a LlamaForCausalLM/Qwen2/Qwen3 model",
    );
  }
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) {
    throw new MasoError("HF_CONFIG_FIELD", `${source}: ${key} must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

function positiveNumber(raw: Json, key: string, source: string, fallback: number): number {
  const v = raw[key] ?? fallback;
  if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v)) {
    throw new MasoError("HF_CONFIG_FIELD", `${source}: ${key} must be a positive number, got ${JSON.stringify(v)}`);
  }
  return v;
}

function bool(raw: Json, key: string, source: string, fallback: boolean): boolean {
  const v = raw[key] ?? fallback;
  if (typeof v !== "boolean") throw new MasoError("HF_CONFIG_FIELD", `${source}: ${key} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function tokenIds(v: unknown, key: string, source: string): number[] | undefined {
  if (v === undefined || v === null) return undefined;
  const list = Array.isArray(v) ? v : [v];
  if (list.length === 0 || !list.every((x) => Number.isSafeInteger(x) && x >= 0)) {
    throw new MasoError("HF_CONFIG_FIELD", `${source}: ${key} must be a token id or a list of token ids, got ${JSON.stringify(v)}`);
  }
  return list as number[];
}

function architectureOf(raw: Json, source: string): Architecture {
  const classes = raw.architectures;
  if (Array.isArray(classes) && classes.length > 0) {
    const arch = ARCH_CLASSES[String(classes[0])];
    if (!arch) throw fail(source, `architecture ${String(classes[0])} is not supported`);
    return arch;
  }
  const type = raw.model_type;
  if (type === "llama" || type === "qwen2" || type === "qwen3") return type;
  throw fail(source, `cannot tell the architecture (architectures=${JSON.stringify(classes)}, model_type=${JSON.stringify(type)})`);
}

/** rope_theta from the legacy field or transformers v5's rope_parameters; rejects any scaling. */
function ropeTheta(raw: Json, source: string): number {
  const isDefault = (r: unknown): boolean => {
    if (r === undefined || r === null) return true;
    if (typeof r !== "object" || Array.isArray(r)) return false;
    const { rope_type: t, type, rope_theta: _theta, ...rest } = r as Json;
    const kind = t ?? type;
    return (kind === undefined || kind === "default") && Object.keys(rest).length === 0;
  };
  for (const key of ["rope_scaling", "rope_parameters"]) {
    if (!isDefault(raw[key])) {
      throw fail(
        source,
        `${key} ${JSON.stringify(raw[key])} is not supported`,
        "maso implements plain RoPE only; use a model without rope scaling",
      );
    }
  }
  const params = raw.rope_parameters as Json | undefined | null;
  const fromParams = params && typeof params === "object" ? params.rope_theta : undefined;
  return positiveNumber({ rope_theta: raw.rope_theta ?? fromParams }, "rope_theta", source, 10000);
}

function rejectUnsupported(raw: Json, source: string): void {
  const act = raw.hidden_act ?? "silu";
  if (act !== "silu") throw fail(source, `hidden_act ${JSON.stringify(act)} is not supported`, "maso's MLP is SwiGLU with SiLU");
  if (raw.mlp_bias === true) throw fail(source, "mlp_bias true is not supported", "maso's MLP projections have no bias");
  if (raw.use_sliding_window === true) {
    throw fail(source, "use_sliding_window true is not supported", "maso implements full causal attention only");
  }
  const layerTypes = raw.layer_types;
  if (Array.isArray(layerTypes) && layerTypes.some((t) => t !== "full_attention")) {
    throw fail(source, "layer_types includes non-full attention layers", "maso implements full causal attention only");
  }
  if (raw.quantization_config !== undefined && raw.quantization_config !== null) {
    throw fail(source, "quantized checkpoints are not supported", "use the unquantized (bf16/fp16/fp32) release of the model");
  }
}

/**
 * Parse an HF config.json object into a ModelConfig, applying HF's defaults and rejecting
 * settings maso's engine cannot run.
 * @param source a label for error messages (usually the file path)
 * @example
 * const cfg = parseHfConfig(JSON.parse(text), "Qwen2.5-0.5B/config.json");
 */
export function parseHfConfig(json: unknown, source = "config.json"): ModelConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new MasoError("HF_CONFIG_FIELD", `${source}: not a JSON object`);
  }
  const raw = json as Json;
  const architecture = architectureOf(raw, source);
  rejectUnsupported(raw, source);
  const hiddenSize = positiveInt(raw, "hidden_size", source);
  const numHeads = positiveInt(raw, "num_attention_heads", source);
  const numKvHeads = positiveInt(raw, "num_key_value_heads", source, numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new MasoError(
      "HF_CONFIG_FIELD",
      `${source}: num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`,
    );
  }
  // HF: Qwen3Config declares head_dim=128; Llama and Qwen2 derive hidden_size / num_attention_heads.
  let headDim: number;
  if (raw.head_dim !== undefined && raw.head_dim !== null) headDim = positiveInt(raw, "head_dim", source);
  else if (architecture === "qwen3") headDim = 128;
  else if (hiddenSize % numHeads === 0) headDim = hiddenSize / numHeads;
  else throw new MasoError("HF_CONFIG_FIELD", `${source}: hidden_size ${hiddenSize} is not a multiple of num_attention_heads ${numHeads}`);

  const attentionBias = bool(raw, "attention_bias", source, false);
  const defaults = DEFAULTS[architecture];
  const cfg: ModelConfig = {
    architecture,
    vocabSize: positiveInt(raw, "vocab_size", source),
    hiddenSize,
    intermediateSize: positiveInt(raw, "intermediate_size", source),
    numLayers: positiveInt(raw, "num_hidden_layers", source),
    numHeads,
    numKvHeads,
    headDim,
    ropeTheta: ropeTheta(raw, source),
    rmsNormEps: positiveNumber(raw, "rms_norm_eps", source, 1e-6),
    tieWordEmbeddings: bool(raw, "tie_word_embeddings", source, false),
    // Qwen2 always has q/k/v bias and never o bias; Llama and Qwen3 put attention_bias on all four.
    qkvBias: architecture === "qwen2" ? true : attentionBias,
    oBias: architecture === "qwen2" ? false : attentionBias,
    qkNorm: architecture === "qwen3",
    maxPositionEmbeddings: positiveInt(raw, "max_position_embeddings", source, defaults.maxPositionEmbeddings),
  };
  const bos = tokenIds(raw.bos_token_id === undefined ? defaults.bosTokenId : raw.bos_token_id, "bos_token_id", source);
  if (bos && bos.length > 1) throw new MasoError("HF_CONFIG_FIELD", `${source}: bos_token_id must be a single id`);
  if (bos) cfg.bosTokenId = bos[0];
  const eos = tokenIds(raw.eos_token_id === undefined ? defaults.eosTokenId : raw.eos_token_id, "eos_token_id", source);
  if (eos) cfg.eosTokenIds = eos;
  return cfg;
}

/** Read and parse `<dir>/config.json` (or a path to the JSON file itself). */
export async function readHfConfig(dirOrFile: string): Promise<ModelConfig> {
  const path = dirOrFile.endsWith(".json") ? dirOrFile : join(dirOrFile, "config.json");
  let text: string;
  try {
    text = await readRegularFile(path, "utf8");
  } catch (e) {
    throw new MasoError(
      "HF_CONFIG_MISSING",
      `cannot read ${path}: ${(e as Error).message}`,
      "point at an HF model directory with config.json",
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new MasoError("HF_CONFIG_JSON", `${path} is not valid JSON (${(e as Error).message})`);
  }
  return parseHfConfig(json, path);
}

export type TorchDtype = "float32" | "float16" | "bfloat16";

/**
 * The config.json HF transformers needs to load a model saved by maso. Throws
 * HF_CONFIG_UNREPRESENTABLE when the flags cannot be expressed for the architecture (for example
 * a Qwen2 config without q/k/v bias).
 */
export function toHfConfig(cfg: ModelConfig, opts: { torchDtype?: TorchDtype } = {}): Record<string, unknown> {
  const bad = (what: string) =>
    new MasoError(
      "HF_CONFIG_UNREPRESENTABLE",
      `${cfg.architecture} config cannot have ${what}`,
      "fix the architecture flags in the ModelConfig",
    );
  if (cfg.architecture === "qwen2" && (!cfg.qkvBias || cfg.oBias)) throw bad("qkvBias != true or oBias != false");
  if (cfg.architecture !== "qwen2" && cfg.qkvBias !== cfg.oBias) throw bad("qkvBias != oBias (HF has one attention_bias flag)");
  if (cfg.qkNorm !== (cfg.architecture === "qwen3")) throw bad(`qkNorm ${cfg.qkNorm}`);
  const out: Record<string, unknown> = {
    architectures: [CLASS_OF[cfg.architecture]],
    model_type: cfg.architecture,
    vocab_size: cfg.vocabSize,
    hidden_size: cfg.hiddenSize,
    intermediate_size: cfg.intermediateSize,
    num_hidden_layers: cfg.numLayers,
    num_attention_heads: cfg.numHeads,
    num_key_value_heads: cfg.numKvHeads,
    head_dim: cfg.headDim,
    hidden_act: "silu",
    max_position_embeddings: cfg.maxPositionEmbeddings,
    rms_norm_eps: cfg.rmsNormEps,
    rope_theta: cfg.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: cfg.tieWordEmbeddings,
    attention_dropout: 0.0,
    initializer_range: 0.02,
    use_cache: true,
    torch_dtype: opts.torchDtype ?? "float32",
  };
  if (cfg.architecture !== "qwen2") out.attention_bias = cfg.qkvBias;
  if (cfg.architecture === "llama") {
    out.mlp_bias = false;
    out.pretraining_tp = 1;
  } else {
    out.use_sliding_window = false;
    out.sliding_window = null;
    out.max_window_layers = cfg.numLayers;
  }
  // HF's null (not absent) keeps Llama's defaults of bos=1 / eos=2 from applying on reload
  out.bos_token_id = cfg.bosTokenId ?? null;
  const eos = cfg.eosTokenIds;
  out.eos_token_id = !eos || eos.length === 0 ? null : eos.length === 1 ? eos[0] : [...eos];
  return out;
}
