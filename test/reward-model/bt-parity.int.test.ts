// The reward model's Bradley–Terry loss through the value head against an independent PyTorch
// (float64) implementation (test/reference/reward_ref.py): the rewards read at the last token, the
// loss, and the gradient of every base and head parameter; plus dL/dr by hand.
import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../../src/engine/config.js";
import { rewardScores } from "../../src/rl/reward-model/score.js";
import { btLoss, type Encoded, rewardLossBackward } from "../../src/rl/reward-model/train.js";
import { build, type Case } from "../engine/decoder-cases.js";
import { maxDiff, runReference } from "../reference/reference.js";

const config: ModelConfig = {
  architecture: "qwen2",
  vocabSize: 61,
  hiddenSize: 24,
  intermediateSize: 40,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 6,
  ropeTheta: 10000,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  qkvBias: true,
  oBias: false,
  qkNorm: false,
  maxPositionEmbeddings: 64,
};
const c: Case = {
  name: "reward model",
  config,
  trainBase: true,
  valueHead: { hidden: 12 },
  sequences: [{ length: 9 }, { length: 14 }, { length: 5 }, { length: 5 }, { length: 17 }, { length: 3 }],
};

describe("Bradley–Terry loss through the value head", () => {
  it("dL/dr by hand: σ(r_r − r_c) pushes chosen up and rejected down", () => {
    const l = btLoss(1.5, -0.5);
    const s = 1 / (1 + Math.exp(2));
    expect(l.loss).toBeCloseTo(-Math.log(1 / (1 + Math.exp(-2))), 12);
    expect(l.dChosen).toBeCloseTo(-s, 12);
    expect(l.dRejected).toBeCloseTo(s, 12);
    expect(btLoss(0, 800).loss).toBeCloseTo(800, 9); // no overflow far from the margin
    expect(btLoss(800, 0).loss).toBeCloseTo(0, 12);
  });

  it("rewards, loss and every gradient agree with PyTorch within 1e-4 of scale", () => {
    const fx = runReference("reward_ref.py", { ...c, seed: 99, sequences: c.sequences.map((s) => ({ ...s, scoreFraction: 0.5 })) });
    const model = build(c, fx);
    const ids = fx.manifest.sequences.map((s) => s.tokens);
    expect(maxDiff(rewardScores(model, model.valueHead!, ids), fx.get("out/rewards")).abs).toBeLessThanOrEqual(1e-4);
    const batch: Encoded[] = [];
    for (let i = 0; i < ids.length; i += 2)
      batch.push({ ex: { kind: "pair", line: i / 2 + 1, prompt: "", chosen: "", rejected: "" }, texts: [ids[i], ids[i + 1]] });
    model.zeroGrad();
    const loss = rewardLossBackward(model, batch) / batch.length;
    expect(Math.abs(loss - fx.manifest.losses[0])).toBeLessThanOrEqual(1e-5);
    const worst: string[] = [];
    const check = (label: string, got: Float32Array, ref: string) => {
      const d = maxDiff(got, fx.get(ref));
      if (!(d.abs / Math.max(d.scale, 1e-6) <= 1e-4))
        worst.push(`${label}: abs ${d.abs.toExponential(2)} scale ${d.scale.toExponential(2)}`);
    };
    for (const s of model.grads!.specs) check(s.name, model.grads!.get(s.name), `grad/param/${s.name}`);
    for (const s of model.valueHead!.grads.specs) check(s.name, model.valueHead!.grads.get(s.name), `grad/value/${s.name}`);
    expect(worst).toEqual([]);
  });
});
