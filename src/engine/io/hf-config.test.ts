// HF config.json parsing on the real configs of Llama-3-8B, Qwen2.5-0.5B and Qwen3-0.6B (values as
// published on the HF hub), HF's defaults, rejection of settings the engine cannot run, and
// toHfConfig -> parseHfConfig round trips.
import { describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import type { ModelConfig } from "../config.js";
import { parseHfConfig, toHfConfig } from "./hf-config.js";

/** meta-llama/Meta-Llama-3-8B config.json */
const LLAMA3_8B = {
  architectures: ["LlamaForCausalLM"],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 128000,
  eos_token_id: 128001,
  hidden_act: "silu",
  hidden_size: 4096,
  initializer_range: 0.02,
  intermediate_size: 14336,
  max_position_embeddings: 8192,
  model_type: "llama",
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  pretraining_tp: 1,
  rms_norm_eps: 1e-5,
  rope_scaling: null,
  rope_theta: 500000.0,
  tie_word_embeddings: false,
  torch_dtype: "bfloat16",
  transformers_version: "4.40.0.dev0",
  use_cache: true,
  vocab_size: 128256,
};

/** Qwen/Qwen2.5-0.5B config.json */
const QWEN25_05B = {
  architectures: ["Qwen2ForCausalLM"],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151643,
  hidden_act: "silu",
  hidden_size: 896,
  initializer_range: 0.02,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  max_window_layers: 24,
  model_type: "qwen2",
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  transformers_version: "4.40.1",
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

/** Qwen/Qwen3-0.6B config.json */
const QWEN3_06B = {
  architectures: ["Qwen3ForCausalLM"],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: "silu",
  hidden_size: 1024,
  initializer_range: 0.02,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  max_window_layers: 28,
  model_type: "qwen3",
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  transformers_version: "4.51.0",
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

const codeOf = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(MasoError);
    return (e as MasoError).code;
  }
  throw new Error("expected a MasoError");
};

describe("parseHfConfig on real configs", () => {
  it("Llama-3-8B: GQA 32/8, no biases, untied, rope 5e5", () => {
    expect(parseHfConfig(LLAMA3_8B)).toEqual({
      architecture: "llama",
      vocabSize: 128256,
      hiddenSize: 4096,
      intermediateSize: 14336,
      numLayers: 32,
      numHeads: 32,
      numKvHeads: 8,
      headDim: 128,
      ropeTheta: 500000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: false,
      qkvBias: false,
      oBias: false,
      qkNorm: false,
      maxPositionEmbeddings: 8192,
      bosTokenId: 128000,
      eosTokenIds: [128001],
    } satisfies ModelConfig);
  });

  it("Qwen2.5-0.5B: tied embeddings, q/k/v bias without o bias, head_dim 64", () => {
    expect(parseHfConfig(QWEN25_05B)).toEqual({
      architecture: "qwen2",
      vocabSize: 151936,
      hiddenSize: 896,
      intermediateSize: 4864,
      numLayers: 24,
      numHeads: 14,
      numKvHeads: 2,
      headDim: 64,
      ropeTheta: 1e6,
      rmsNormEps: 1e-6,
      tieWordEmbeddings: true,
      qkvBias: true,
      oBias: false,
      qkNorm: false,
      maxPositionEmbeddings: 32768,
      bosTokenId: 151643,
      eosTokenIds: [151643],
    } satisfies ModelConfig);
  });

  it("Qwen3-0.6B: explicit head_dim 128 (not 1024/16), q/k norm, no biases", () => {
    expect(parseHfConfig(QWEN3_06B)).toEqual({
      architecture: "qwen3",
      vocabSize: 151936,
      hiddenSize: 1024,
      intermediateSize: 3072,
      numLayers: 28,
      numHeads: 16,
      numKvHeads: 8,
      headDim: 128,
      ropeTheta: 1e6,
      rmsNormEps: 1e-6,
      tieWordEmbeddings: true,
      qkvBias: false,
      oBias: false,
      qkNorm: true,
      maxPositionEmbeddings: 40960,
      bosTokenId: 151643,
      eosTokenIds: [151645],
    } satisfies ModelConfig);
  });

  it("transformers v5 style: rope_parameters, dtype, layer_types and an eos list", () => {
    const { rope_theta: _t, rope_scaling: _s, torch_dtype: _d, ...rest } = QWEN3_06B;
    const cfg = parseHfConfig({
      ...rest,
      dtype: "bfloat16",
      rope_parameters: { rope_type: "default", rope_theta: 1000000 },
      layer_types: Array(28).fill("full_attention"),
      eos_token_id: [151645, 151643],
    });
    expect(cfg.ropeTheta).toBe(1e6);
    expect(cfg.eosTokenIds).toEqual([151645, 151643]);
  });
});

describe("HF defaults", () => {
  const minimal = { hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 100 };
  it("llama: kv heads = heads, head_dim = C/NH, rope 1e4, eps 1e-6, untied, bos 1 / eos 2, 2048 positions", () => {
    expect(parseHfConfig({ ...minimal, model_type: "llama" })).toEqual({
      architecture: "llama",
      vocabSize: 100,
      hiddenSize: 64,
      intermediateSize: 128,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 4,
      headDim: 16,
      ropeTheta: 10000,
      rmsNormEps: 1e-6,
      tieWordEmbeddings: false,
      qkvBias: false,
      oBias: false,
      qkNorm: false,
      maxPositionEmbeddings: 2048,
      bosTokenId: 1,
      eosTokenIds: [2],
    });
  });
  it("qwen3 without head_dim uses Qwen3Config's default of 128; attention_bias applies to q/k/v/o", () => {
    const cfg = parseHfConfig({ ...minimal, model_type: "qwen3", attention_bias: true });
    expect(cfg.headDim).toBe(128);
    expect(cfg.qkvBias && cfg.oBias).toBe(true);
    expect(cfg.maxPositionEmbeddings).toBe(32768);
    expect(cfg.bosTokenId).toBeUndefined();
  });
  it("qwen2 ignores attention_bias: q/k/v bias always, o never", () => {
    const cfg = parseHfConfig({ ...minimal, model_type: "qwen2", attention_bias: false });
    expect([cfg.qkvBias, cfg.oBias]).toEqual([true, false]);
  });
  it("llama attention_bias puts bias on q/k/v/o", () => {
    const cfg = parseHfConfig({ ...minimal, architectures: ["LlamaForCausalLM"], attention_bias: true });
    expect([cfg.qkvBias, cfg.oBias]).toEqual([true, true]);
  });
});

describe("rejections", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "Llama-3.2 llama3 rope scaling",
      {
        ...LLAMA3_8B,
        rope_scaling: {
          factor: 32.0,
          high_freq_factor: 4.0,
          low_freq_factor: 1.0,
          original_max_position_embeddings: 8192,
          rope_type: "llama3",
        },
      },
      "HF_CONFIG_UNSUPPORTED",
    ],
    [
      "yarn via rope_parameters",
      { ...QWEN3_06B, rope_parameters: { rope_type: "yarn", factor: 4, rope_theta: 1e6 } },
      "HF_CONFIG_UNSUPPORTED",
    ],
    ["gelu", { ...LLAMA3_8B, hidden_act: "gelu" }, "HF_CONFIG_UNSUPPORTED"],
    ["mlp_bias", { ...LLAMA3_8B, mlp_bias: true }, "HF_CONFIG_UNSUPPORTED"],
    ["sliding window", { ...QWEN25_05B, use_sliding_window: true }, "HF_CONFIG_UNSUPPORTED"],
    ["sliding layer types", { ...QWEN3_06B, layer_types: ["full_attention", "sliding_attention"] }, "HF_CONFIG_UNSUPPORTED"],
    ["quantized", { ...QWEN3_06B, quantization_config: { quant_method: "awq" } }, "HF_CONFIG_UNSUPPORTED"],
    ["other architecture", { ...LLAMA3_8B, architectures: ["MistralForCausalLM"] }, "HF_CONFIG_UNSUPPORTED"],
    ["no architecture", { hidden_size: 8 }, "HF_CONFIG_UNSUPPORTED"],
    ["missing hidden_size", { ...LLAMA3_8B, hidden_size: undefined }, "HF_CONFIG_FIELD"],
    ["fractional layers", { ...LLAMA3_8B, num_hidden_layers: 2.5 }, "HF_CONFIG_FIELD"],
    ["heads not a multiple of kv heads", { ...LLAMA3_8B, num_key_value_heads: 5 }, "HF_CONFIG_FIELD"],
    ["eos as string", { ...LLAMA3_8B, eos_token_id: "</s>" }, "HF_CONFIG_FIELD"],
    ["not an object", [] as unknown as Record<string, unknown>, "HF_CONFIG_FIELD"],
  ];
  for (const [name, json, code] of cases) {
    it(name, () => expect(codeOf(() => parseHfConfig(json, "x/config.json"))).toBe(code));
  }
  it("messages name the file and the setting", () => {
    expect(() => parseHfConfig({ ...LLAMA3_8B, hidden_act: "gelu" }, "m/config.json")).toThrow(/m\/config\.json: hidden_act "gelu"/);
  });
});

describe("toHfConfig", () => {
  it("round-trips through parseHfConfig for all three architectures", () => {
    for (const json of [LLAMA3_8B, QWEN25_05B, QWEN3_06B, { ...LLAMA3_8B, eos_token_id: [128001, 128009] }]) {
      const cfg = parseHfConfig(json);
      const out = toHfConfig(cfg, { torchDtype: "bfloat16" });
      expect(parseHfConfig(JSON.parse(JSON.stringify(out)))).toEqual(cfg);
      expect(out.torch_dtype).toBe("bfloat16");
      expect(out.architectures).toEqual(json.architectures);
      expect(out.rope_scaling).toBeNull();
      expect(out.hidden_act).toBe("silu");
    }
  });
  it("writes HF's field conventions per architecture", () => {
    const q2 = toHfConfig(parseHfConfig(QWEN25_05B));
    expect(q2.attention_bias).toBeUndefined();
    expect(q2.use_sliding_window).toBe(false);
    expect(q2.torch_dtype).toBe("float32");
    expect(q2.eos_token_id).toBe(151643);
    const l = toHfConfig(parseHfConfig(LLAMA3_8B));
    expect(l.mlp_bias).toBe(false);
    expect(l.attention_bias).toBe(false);
    const noIds = toHfConfig({ ...parseHfConfig(LLAMA3_8B), bosTokenId: undefined, eosTokenIds: undefined });
    expect(parseHfConfig(noIds).eosTokenIds).toBeUndefined(); // null, so Llama's eos default of 2 does not appear
  });
  it("refuses flag combinations HF cannot express", () => {
    const q2 = parseHfConfig(QWEN25_05B);
    expect(codeOf(() => toHfConfig({ ...q2, oBias: true }))).toBe("HF_CONFIG_UNREPRESENTABLE");
    const l = parseHfConfig(LLAMA3_8B);
    expect(codeOf(() => toHfConfig({ ...l, qkvBias: true }))).toBe("HF_CONFIG_UNREPRESENTABLE");
    expect(codeOf(() => toHfConfig({ ...l, qkNorm: true }))).toBe("HF_CONFIG_UNREPRESENTABLE");
  });
});
