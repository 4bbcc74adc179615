// Named views of a decoder's per-layer tensors, fresh-weight initialisation, and config checks.
// Shared by the trainer (decoder.ts) and the sampler, which read the same parameter memory.
import { MasoError } from "../../errors.js";
import { LORA_TARGETS, type LoraTarget as Proj, type ModelConfig } from "../config.js";
import { ParamTable, modelParamSpecs, moduleOf } from "../params.js";
import type { Rng } from "../../rng.js";
import { fillNormal } from "./init.js";

/** Views of one layer's base tensors (used by the sampler, which shares these weights). */
export interface LayerWeights {
  ln1: Float32Array;
  ln2: Float32Array;
  qNorm?: Float32Array;
  kNorm?: Float32Array;
  w: Record<Proj, Float32Array>;
  b: Partial<Record<Proj, Float32Array>>;
}

/** Gradient views have the same layout as the weights they belong to. */
export type LayerGrads = LayerWeights;

/** Per-layer views into a parameter (or gradient) table of `cfg`'s layout. */
export function layerViews(cfg: ModelConfig, t: ParamTable): LayerWeights[] {
  const out: LayerWeights[] = [];
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}`;
    const w = {} as Record<Proj, Float32Array>;
    const b: Partial<Record<Proj, Float32Array>> = {};
    for (const x of LORA_TARGETS) {
      w[x] = t.get(`${p}.${moduleOf(x)}.${x}.weight`);
      const bn = `${p}.${moduleOf(x)}.${x}.bias`;
      if (t.has(bn)) b[x] = t.get(bn);
    }
    out.push({
      ln1: t.get(`${p}.input_layernorm.weight`),
      ln2: t.get(`${p}.post_attention_layernorm.weight`),
      qNorm: cfg.qkNorm ? t.get(`${p}.self_attn.q_norm.weight`) : undefined,
      kNorm: cfg.qkNorm ? t.get(`${p}.self_attn.k_norm.weight`) : undefined,
      w,
      b,
    });
  }
  return out;
}

/** Fresh weights for training from scratch: N(0, 0.02) matrices, unit norms, zero biases. */
export function initParams(cfg: ModelConfig, rng: Rng): ParamTable {
  const t = new ParamTable(modelParamSpecs(cfg));
  for (const s of t.specs) {
    const v = t.get(s.name);
    if (s.name.endsWith("norm.weight") || s.name.endsWith("layernorm.weight")) v.fill(1);
    else if (s.shape.length === 2)
      fillNormal(
        v,
        rng,
        s.name.endsWith("o_proj.weight") || s.name.endsWith("down_proj.weight") ? 0.02 / Math.sqrt(2 * cfg.numLayers) : 0.02,
      );
  }
  return t;
}

export function validateConfig(cfg: ModelConfig): void {
  const pos = (name: keyof ModelConfig) => {
    const v = cfg[name];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1)
      throw new MasoError("MODEL_CONFIG", `model config field ${name} must be a positive integer, got ${String(v)}`);
  };
  for (const f of [
    "vocabSize",
    "hiddenSize",
    "intermediateSize",
    "numLayers",
    "numHeads",
    "numKvHeads",
    "headDim",
    "maxPositionEmbeddings",
  ] as const)
    pos(f);
  if (cfg.numHeads % cfg.numKvHeads !== 0)
    throw new MasoError("MODEL_CONFIG", `numHeads (${cfg.numHeads}) must be a multiple of numKvHeads (${cfg.numKvHeads})`);
  if (cfg.headDim % 2 !== 0) throw new MasoError("MODEL_CONFIG", `headDim must be even for RoPE, got ${cfg.headDim}`);
  if (!(cfg.ropeTheta > 1)) throw new MasoError("MODEL_CONFIG", `ropeTheta must be > 1, got ${cfg.ropeTheta}`);
  if (!(cfg.rmsNormEps > 0)) throw new MasoError("MODEL_CONFIG", `rmsNormEps must be > 0, got ${cfg.rmsNormEps}`);
}

/** Floats a training forward saves per token for backward, over all layers (LayerActs in block.ts). */
export function savedFloatsPerToken(cfg: ModelConfig): number {
  const { C, F, NH, KVH, HS } = layerDims(cfg);
  return cfg.numLayers * (5 * C + 4 * NH * HS + 4 * KVH * HS + NH + 3 * F);
}

/** The dimension letters of one decoder layer (C, F, NH, KVH, HS) and its norm epsilon. */
export function layerDims(cfg: ModelConfig) {
  return { C: cfg.hiddenSize, F: cfg.intermediateSize, NH: cfg.numHeads, KVH: cfg.numKvHeads, HS: cfg.headDim, eps: cfg.rmsNormEps };
}
