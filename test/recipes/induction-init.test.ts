// The planted copying circuit (recipes/base-model/induction-init.ts) copies unseen random token
// sequences at initialisation, and only because of the two planted heads; its copy heads learn where
// to look while training keeps the planted entries fixed.
import { describe, expect, it } from "vitest";
import { baseModelConfig } from "../../recipes/base-model/build-base-model.js";
import { plantInductionCircuit } from "../../recipes/base-model/induction-init.js";
import { type EncodedExample, trainExamples } from "../../recipes/base-model/train-loop.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { createRng } from "../../src/rng.js";

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

function meanProb(model: Decoder, batch: readonly EncodedExample[]): number {
  const out = model.forward(batch);
  return out.logp.reduce((a, x) => a + Math.exp(x), 0) / out.logp.length;
}

function meanTargetProb(model: Decoder, filler: number): number {
  const rng = createRng(filler);
  return meanProb(
    model,
    Array.from({ length: 16 }, () => repeatExample(rng, filler)),
  );
}

describe("plantInductionCircuit", () => {
  it("copies unseen sequences at short and long distances before any training", () => {
    const model = new Decoder(cfg, undefined, { seed: 1, trainBase: false });
    plantInductionCircuit(model.params, cfg, createRng(2), { copyLayers: [] }); // untrained copy heads add a bag of the context
    for (const filler of [3, 150]) expect(meanTargetProb(model, filler)).toBeGreaterThan(0.8);
  });

  it("copies nothing without the induction head (random init is at chance)", () => {
    const model = new Decoder(cfg, undefined, { seed: 1, trainBase: false });
    plantInductionCircuit(model.params, cfg, createRng(2), { copyLayers: [] });
    model.params.get("model.layers.1.self_attn.o_proj.weight").fill(0);
    expect(meanTargetProb(model, 20)).toBeLessThan(0.01);
  });

  it("copy heads learn which token to copy while the planted entries stay fixed", () => {
    // the token after MARK is the target at QUERY: a selection the induction head alone cannot make
    const [MARK, QUERY] = [V - 2, V - 3];
    const example = (i: number): EncodedExample => {
      const rng = createRng(1000 + i);
      const rand = (n: number) => Array.from({ length: n }, () => Math.floor(rng.next() * (V - 4)));
      const x = rand(1);
      const tokens = [V - 1, ...rand(3 + (i % 7)), MARK, ...x, ...rand(3 + (i % 5)), QUERY, ...x];
      return { tokens, scoreMask: tokens.map((_, j) => (j === tokens.length - 1 ? 1 : 0)) };
    };
    const heldOut = Array.from({ length: 32 }, (_, i) => example(100_000 + i));
    const model = new Decoder(cfg, undefined, { seed: 1 });
    const pinned = plantInductionCircuit(model.params, cfg, createRng(2));
    expect(meanProb(model, heldOut)).toBeLessThan(0.01);
    const before = new Map([...pinned.keys()].map((n) => [n, model.params.get(n).slice()]));
    const schedule = { kind: "constant" as const, lr: 3e-3 };
    trainExamples(model, example, 10_000, { steps: 60, batchSize: 16, schedule, seed: 3, weightDecay: 0.1, pinned });
    expect(meanProb(model, heldOut)).toBeGreaterThan(0.5);
    for (const [n, mask] of pinned) {
      const now = model.params.get(n);
      const moved = before.get(n)!.filter((v, i) => mask[i] === 1 && now[i] !== v).length;
      expect(moved, n).toBe(0);
    }
    expect(before.get("model.layers.2.self_attn.k_proj.weight")).toBeUndefined(); // where to look is learned
  });

  it("refuses a model it cannot hold the circuit in", () => {
    const small = { ...cfg, numLayers: 1 };
    const model = new Decoder(small, undefined, { seed: 1, trainBase: false });
    expect(() => plantInductionCircuit(model.params, small, createRng(2))).toThrow(/INDUCTION_INIT|cannot plant/);
  });
});
