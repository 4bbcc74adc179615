// The decoder cases both PyTorch comparisons use (fp32 parity, bf16 against autocast): Llama,
// Qwen2 and Qwen3 shapes on packed batches of uneven sequences, with the helpers that load a
// reference fixture's weights into a Decoder and compute the weighted loss the reference uses.
import type { LoraTarget, ModelConfig } from "../../src/engine/config.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import type { ParamGroup } from "../../src/engine/optim/adamw.js";
import { ParamTable, modelParamSpecs } from "../../src/engine/params.js";
import type { Fixture } from "../reference/reference.js";

export interface Case {
  name: string;
  config: ModelConfig;
  trainBase: boolean;
  adapters?: Record<string, { rank: number; alpha: number; targets: LoraTarget[] }>;
  valueHead?: { hidden: number };
  temperature?: number;
  sequences: { length: number; adapter?: string }[];
}

const base = { rmsNormEps: 1e-6, maxPositionEmbeddings: 256, oBias: false } as const;
export const OPT = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1.0, steps: 3 };

export const cases: Case[] = [
  {
    name: "llama: untied head, GQA, full fine-tuning + value head",
    config: {
      ...base,
      architecture: "llama",
      vocabSize: 97,
      hiddenSize: 32,
      intermediateSize: 48,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 8,
      ropeTheta: 10000,
      tieWordEmbeddings: false,
      qkvBias: false,
      qkNorm: false,
    },
    trainBase: true,
    valueHead: { hidden: 16 },
    sequences: [{ length: 13 }, { length: 1 }, { length: 29 }, { length: 7 }],
  },
  {
    name: "qwen2: tied head, q/k/v bias, two LoRA adapters mixed with base rows, frozen base",
    config: {
      ...base,
      architecture: "qwen2",
      vocabSize: 89,
      hiddenSize: 32,
      intermediateSize: 40,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 1,
      headDim: 8,
      ropeTheta: 1000000,
      tieWordEmbeddings: true,
      qkvBias: true,
      qkNorm: false,
    },
    trainBase: false,
    temperature: 0.7,
    adapters: {
      planner: { rank: 4, alpha: 8, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] },
      answerer: { rank: 2, alpha: 4, targets: ["q_proj", "v_proj", "down_proj"] },
    },
    valueHead: { hidden: 8 },
    sequences: [
      { length: 11, adapter: "planner" },
      { length: 17 },
      { length: 9, adapter: "answerer" },
      { length: 14, adapter: "planner" },
      { length: 6, adapter: "answerer" },
    ],
  },
  {
    name: "qwen3: q/k norm, head_dim != C/NH, llama-style o bias, full fine-tuning",
    config: {
      ...base,
      architecture: "qwen3",
      vocabSize: 101,
      hiddenSize: 24,
      intermediateSize: 40,
      numLayers: 3,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 10,
      ropeTheta: 10000,
      tieWordEmbeddings: false,
      qkvBias: true,
      oBias: true,
      qkNorm: true,
    },
    trainBase: true,
    sequences: [{ length: 21 }, { length: 5 }, { length: 16 }],
  },
];

export function build(c: Case, fx: Fixture): Decoder {
  const params = new ParamTable(modelParamSpecs(c.config));
  for (const s of params.specs) params.get(s.name).set(fx.get(`param/${s.name}`));
  const model = new Decoder(c.config, params, { trainBase: c.trainBase });
  for (const [name, lora] of Object.entries(c.adapters ?? {})) {
    const a = model.addAdapter(name, lora);
    for (const s of a.params.specs) a.params.get(s.name).set(fx.get(`adapter/${name}/${s.name}`));
  }
  if (c.valueHead) {
    const vh = model.addValueHead(c.valueHead.hidden);
    for (const s of vh.params.specs) vh.params.get(s.name).set(fx.get(`value/${s.name}`));
  }
  return model;
}

export function groups(model: Decoder): ParamGroup[] {
  const g: ParamGroup[] = [];
  if (model.grads) g.push({ name: "base", params: model.params, grads: model.grads });
  for (const a of model.adapters.values()) g.push({ name: `adapter:${a.name}`, params: a.params, grads: a.grads });
  if (model.valueHead) g.push({ name: "value", params: model.valueHead.params, grads: model.valueHead.grads });
  return g;
}

export function loss(model: Decoder, c: Case, fx: Fixture, seqs: Parameters<Decoder["forward"]>[0], keepLogitsFloats?: number) {
  const out = model.forward(seqs, { grad: true, values: !!c.valueHead, temperature: c.temperature, keepLogitsFloats });
  const wl = fx.get("in/w_logp");
  const we = fx.get("in/w_ent");
  const wv = fx.get("in/w_val");
  let L = 0;
  for (let i = 0; i < out.logp.length; i++) {
    L += wl[i] * out.logp[i] + we[i] * out.entropy[i] + (out.values ? wv[i] * out.values[i] : 0);
  }
  return { out, L, grads: { dlogp: wl, dentropy: we, dvalues: c.valueHead ? wv : undefined } };
}
