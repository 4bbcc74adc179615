// The engine against an independent PyTorch (float64) implementation: per-token log-probs,
// entropies and values, every gradient (base, LoRA, value head), and the loss along 3 AdamW steps,
// for Llama, Qwen2 and Qwen3 shapes on a packed batch of uneven sequences.
import { describe, expect, it } from "vitest";
import type { LoraTarget, ModelConfig } from "../../src/engine/config.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { createAdamW, type ParamGroup } from "../../src/engine/optim/adamw.js";
import { ParamTable, modelParamSpecs } from "../../src/engine/params.js";
import { type Fixture, maxDiff, runReference } from "../reference/reference.js";

interface Case {
  name: string;
  config: ModelConfig;
  trainBase: boolean;
  adapters?: Record<string, { rank: number; alpha: number; targets: LoraTarget[] }>;
  valueHead?: { hidden: number };
  temperature?: number;
  sequences: { length: number; adapter?: string }[];
}

const base = { rmsNormEps: 1e-6, maxPositionEmbeddings: 256, oBias: false } as const;
const OPT = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1.0, steps: 3 };

const cases: Case[] = [
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

function build(c: Case, fx: Fixture): Decoder {
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

function groups(model: Decoder): ParamGroup[] {
  const g: ParamGroup[] = [];
  if (model.grads) g.push({ name: "base", params: model.params, grads: model.grads });
  for (const a of model.adapters.values()) g.push({ name: `adapter:${a.name}`, params: a.params, grads: a.grads });
  if (model.valueHead) g.push({ name: "value", params: model.valueHead.params, grads: model.valueHead.grads });
  return g;
}

function loss(model: Decoder, c: Case, fx: Fixture, seqs: Parameters<Decoder["forward"]>[0], keepLogitsFloats?: number) {
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

describe("decoder matches PyTorch", () => {
  for (const c of cases) {
    describe(c.name, () => {
      const spec = { ...c, seed: 1234, optimizer: OPT, sequences: c.sequences.map((s) => ({ ...s, scoreFraction: 0.7 })) };
      const fx = runReference("decoder_ref.py", spec);
      const seqs = fx.manifest.sequences.map((s) => ({ tokens: s.tokens, scoreMask: s.mask, adapter: s.adapter }));

      it("per-token log-probs, entropies and values agree within 1e-4", () => {
        const model = build(c, fx);
        const out = model.forward(seqs, { values: !!c.valueHead, temperature: c.temperature });
        expect(maxDiff(out.logp, fx.get("out/logp")).abs).toBeLessThanOrEqual(1e-4);
        expect(maxDiff(out.entropy, fx.get("out/entropy")).abs).toBeLessThanOrEqual(1e-4);
        if (c.valueHead) expect(maxDiff(out.values!, fx.get("out/values")).abs).toBeLessThanOrEqual(1e-4);
      });

      it.each([
        ["kept logits", undefined],
        ["recomputed logits", 0],
      ])("every gradient agrees within 1e-4 of its scale (%s)", (_label, keep) => {
        const model = build(c, fx);
        const { out, grads } = loss(model, c, fx, seqs, keep);
        model.backward(out.tape!, grads);
        const worst: string[] = [];
        const check = (label: string, got: Float32Array, refName: string) => {
          const d = maxDiff(got, fx.get(refName));
          const rel = d.abs / Math.max(d.scale, 1e-6);
          if (!(rel <= 1e-4)) worst.push(`${label}: abs ${d.abs.toExponential(2)} scale ${d.scale.toExponential(2)}`);
        };
        let checked = 0;
        if (model.grads) {
          for (const s of model.grads.specs) {
            check(s.name, model.grads.get(s.name), `grad/param/${s.name}`);
            checked++;
          }
        } else {
          expect(fx.names("grad/param/")).toEqual([]);
        }
        for (const a of model.adapters.values()) {
          for (const s of a.grads.specs) {
            check(`${a.name}:${s.name}`, a.grads.get(s.name), `grad/adapter/${a.name}/${s.name}`);
            checked++;
          }
        }
        if (model.valueHead) {
          for (const s of model.valueHead.grads.specs) {
            check(s.name, model.valueHead.grads.get(s.name), `grad/value/${s.name}`);
            checked++;
          }
        }
        expect(checked).toBeGreaterThan(0);
        expect(worst).toEqual([]);
      });

      it("loss follows PyTorch along 3 AdamW steps with clipping", () => {
        const model = build(c, fx);
        const opt = createAdamW(groups(model), OPT);
        const losses: number[] = [];
        const norms: number[] = [];
        for (let s = 0; s < OPT.steps; s++) {
          model.zeroGrad();
          const { out, L, grads } = loss(model, c, fx, seqs);
          losses.push(L);
          model.backward(out.tape!, grads);
          norms.push(opt.step().gradNorm);
        }
        losses.push(loss(model, c, fx, seqs).L);
        const want = fx.manifest.losses;
        for (let i = 0; i < want.length; i++)
          expect(Math.abs(losses[i] - want[i])).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want[i])));
        for (let i = 0; i < norms.length; i++)
          expect(Math.abs(norms[i] - fx.manifest.gradNorms[i])).toBeLessThanOrEqual(1e-4 * Math.max(1, fx.manifest.gradNorms[i]));
        expect(losses[OPT.steps]).not.toBeCloseTo(losses[0], 3);
      });
    });
  }
});
