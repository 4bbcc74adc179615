// The planted copying circuit (src/base-model/induction-init.ts) copies unseen random token
// sequences at initialisation, and only because of the two planted heads.
import { describe, expect, it } from "vitest";
import { baseModelConfig } from "../../src/base-model/build-base-model.js";
import { plantInductionCircuit } from "../../src/base-model/induction-init.js";
import type { EncodedExample } from "../../src/base-model/train-loop.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { createRng } from "../../src/engine/model/init.js";

const V = 4096;
const cfg = baseModelConfig(V, [V - 1], 192, 4, "induction");

/** eos, filler, a random segment, filler, the segment again; scored on the repeat after its first token. */
function repeatExample(rng: ReturnType<typeof createRng>, filler: number): EncodedExample {
  const rand = (n: number) => Array.from({ length: n }, () => Math.floor(rng.next() * (V - 2)));
  const seg = rand(10);
  const tokens = [V - 1, ...rand(1 + Math.floor(rng.next() * filler)), ...seg, ...rand(Math.floor(rng.next() * filler)), ...seg];
  const start = tokens.length - seg.length + 1;
  return { tokens, scoreMask: tokens.map((_, i) => (i >= start ? 1 : 0)) };
}

function meanTargetProb(model: Decoder, filler: number): number {
  const rng = createRng(filler);
  const out = model.forward(Array.from({ length: 16 }, () => repeatExample(rng, filler)));
  return out.logp.reduce((a, x) => a + Math.exp(x), 0) / out.logp.length;
}

describe("plantInductionCircuit", () => {
  it("copies unseen sequences at short and long distances before any training", () => {
    const model = new Decoder(cfg, undefined, { seed: 1, trainBase: false });
    plantInductionCircuit(model.params, cfg, createRng(2));
    for (const filler of [3, 150]) expect(meanTargetProb(model, filler)).toBeGreaterThan(0.8);
  });

  it("copies nothing without the induction head (random init is at chance)", () => {
    const model = new Decoder(cfg, undefined, { seed: 1, trainBase: false });
    plantInductionCircuit(model.params, cfg, createRng(2));
    model.params.get("model.layers.1.self_attn.o_proj.weight").fill(0);
    expect(meanTargetProb(model, 20)).toBeLessThan(0.01);
  });

  it("refuses a model it cannot hold the circuit in", () => {
    const small = { ...cfg, numLayers: 1 };
    const model = new Decoder(small, undefined, { seed: 1, trainBase: false });
    expect(() => plantInductionCircuit(model.params, small, createRng(2))).toThrow(/INDUCTION_INIT|cannot plant/);
  });
});
