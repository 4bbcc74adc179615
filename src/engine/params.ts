// Parameter layout: every tensor of a model (or LoRA adapter) is a view into one Float32Array,
// named exactly as in the HF (or PEFT) checkpoint so loading is a 1:1 map with shape checks.
import { MasoError } from "../errors.js";
import { hugePages } from "../native/binding.js";
import type { LoraConfig, LoraTarget, ModelConfig } from "./config.js";

export interface ParamSpec {
  name: string;
  shape: number[];
}

export const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** Input and output width of a projection: weight shape is [out, in]. */
export function projectionShape(cfg: ModelConfig, target: LoraTarget): { inDim: number; outDim: number } {
  const C = cfg.hiddenSize;
  const q = cfg.numHeads * cfg.headDim;
  const kv = cfg.numKvHeads * cfg.headDim;
  switch (target) {
    case "q_proj":
      return { inDim: C, outDim: q };
    case "k_proj":
    case "v_proj":
      return { inDim: C, outDim: kv };
    case "o_proj":
      return { inDim: q, outDim: C };
    case "gate_proj":
    case "up_proj":
      return { inDim: C, outDim: cfg.intermediateSize };
    case "down_proj":
      return { inDim: cfg.intermediateSize, outDim: C };
  }
}

export const moduleOf = (target: LoraTarget): "self_attn" | "mlp" =>
  target === "gate_proj" || target === "up_proj" || target === "down_proj" ? "mlp" : "self_attn";

/** HF tensor names and shapes of a base model, in checkpoint order. */
export function modelParamSpecs(cfg: ModelConfig): ParamSpec[] {
  const C = cfg.hiddenSize;
  const HS = cfg.headDim;
  const specs: ParamSpec[] = [{ name: "model.embed_tokens.weight", shape: [cfg.vocabSize, C] }];
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}`;
    specs.push({ name: `${p}.input_layernorm.weight`, shape: [C] });
    for (const t of ["q_proj", "k_proj", "v_proj", "o_proj"] as const) {
      const { inDim, outDim } = projectionShape(cfg, t);
      specs.push({ name: `${p}.self_attn.${t}.weight`, shape: [outDim, inDim] });
      if ((t !== "o_proj" && cfg.qkvBias) || (t === "o_proj" && cfg.oBias)) {
        specs.push({ name: `${p}.self_attn.${t}.bias`, shape: [outDim] });
      }
    }
    if (cfg.qkNorm) {
      specs.push({ name: `${p}.self_attn.q_norm.weight`, shape: [HS] });
      specs.push({ name: `${p}.self_attn.k_norm.weight`, shape: [HS] });
    }
    specs.push({ name: `${p}.post_attention_layernorm.weight`, shape: [C] });
    for (const t of ["gate_proj", "up_proj", "down_proj"] as const) {
      const { inDim, outDim } = projectionShape(cfg, t);
      specs.push({ name: `${p}.mlp.${t}.weight`, shape: [outDim, inDim] });
    }
  }
  specs.push({ name: "model.norm.weight", shape: [C] });
  if (!cfg.tieWordEmbeddings) specs.push({ name: "lm_head.weight", shape: [cfg.vocabSize, C] });
  return specs;
}

/** Name of a LoRA tensor as PEFT writes it in adapter_model.safetensors. */
export const loraTensorName = (layer: number, target: LoraTarget, which: "A" | "B"): string =>
  `base_model.model.model.layers.${layer}.${moduleOf(target)}.${target}.lora_${which}.weight`;

/** PEFT tensor names and shapes of one adapter: A [R, in], B [out, R] per targeted projection. */
export function loraParamSpecs(cfg: ModelConfig, lora: LoraConfig): ParamSpec[] {
  const specs: ParamSpec[] = [];
  for (let l = 0; l < cfg.numLayers; l++) {
    for (const t of lora.targets) {
      const { inDim, outDim } = projectionShape(cfg, t);
      specs.push({ name: loraTensorName(l, t, "A"), shape: [lora.rank, inDim] });
      specs.push({ name: loraTensorName(l, t, "B"), shape: [outDim, lora.rank] });
    }
  }
  return specs;
}

/**
 * One contiguous Float32Array with a named view per tensor (few, large allocations). A fresh table
 * lives in a SharedArrayBuffer so generation lanes (worker threads) read the very weights an update
 * writes, with no copy.
 */
export class ParamTable {
  readonly data: Float32Array;
  readonly specs: readonly ParamSpec[];
  private readonly views = new Map<string, Float32Array>();

  constructor(specs: readonly ParamSpec[], data?: Float32Array) {
    const total = specs.reduce((s, p) => s + numel(p.shape), 0);
    if (data && data.length !== total) {
      throw new MasoError("PARAM_SIZE", `parameter block has ${data.length} floats, layout needs ${total}`);
    }
    this.data = data ?? hugePages(new Float32Array(new SharedArrayBuffer(total * 4)));
    this.specs = specs;
    let off = 0;
    for (const s of specs) {
      if (this.views.has(s.name)) throw new MasoError("PARAM_DUPLICATE", `tensor ${s.name} appears twice in a layout`);
      const n = numel(s.shape);
      this.views.set(s.name, this.data.subarray(off, off + n));
      off += n;
    }
  }

  has(name: string): boolean {
    return this.views.has(name);
  }

  get(name: string): Float32Array {
    const v = this.views.get(name);
    if (!v) throw new MasoError("PARAM_UNKNOWN", `no tensor named ${name}`, "check the architecture flags in the model config");
    return v;
  }

  shape(name: string): number[] {
    const s = this.specs.find((p) => p.name === name);
    if (!s) throw new MasoError("PARAM_UNKNOWN", `no tensor named ${name}`);
    return s.shape;
  }

  /** A zeroed table with the same layout (gradients, optimiser moments). */
  zerosLike(): ParamTable {
    return new ParamTable(this.specs);
  }
}

/** Throws NONFINITE_WEIGHTS naming the first tensor (and index) holding a NaN or infinity. */
export function assertFiniteParams(table: ParamTable, source: string): void {
  for (const s of table.specs) {
    const v = table.get(s.name);
    for (let i = 0; i < v.length; i++) {
      // x - x is 0 for every finite x and NaN for NaN/inf: one cheap test per element
      if (v[i] - v[i] !== 0) {
        throw new MasoError(
          "NONFINITE_WEIGHTS",
          `${source}: tensor ${s.name} holds ${v[i]} at index ${i}`,
          "the checkpoint is corrupt or was saved from a diverged run",
        );
      }
    }
  }
}
