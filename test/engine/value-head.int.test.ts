// The critic's value head trains with the backbone or detached from it.
import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../../src/engine/config.js";
import { Decoder } from "../../src/engine/model/decoder.js";

const cfg: ModelConfig = {
  architecture: "llama",
  vocabSize: 50,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 8,
  ropeTheta: 10000,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: false,
  qkvBias: false,
  oBias: false,
  qkNorm: false,
  maxPositionEmbeddings: 64,
};
const seqs = [{ tokens: [1, 2, 3, 4, 5, 6] }];

function valueGrads(detach: boolean) {
  const m = new Decoder(cfg, undefined, { seed: 1 });
  m.addValueHead(8, { detach });
  const out = m.forward(seqs, { grad: true, values: true });
  m.backward(out.tape!, { dvalues: new Float32Array(out.values!.length).fill(1) });
  const baseNorm = m.grads!.data.reduce((s, x) => s + x * x, 0);
  const headNorm = m.valueHead!.grads.data.reduce((s, x) => s + x * x, 0);
  return { baseNorm, headNorm };
}

describe("value head", () => {
  it("attached: the value loss reaches the backbone", () => {
    const g = valueGrads(false);
    expect(g.headNorm).toBeGreaterThan(0);
    expect(g.baseNorm).toBeGreaterThan(0);
  });

  it("detached: only the head gets gradient", () => {
    const g = valueGrads(true);
    expect(g.headNorm).toBeGreaterThan(0);
    expect(g.baseNorm).toBe(0);
  });
});
