// A data-parallel update against the same update on one rank: the shares' gradients summed in rank
// order give the whole minibatch's gradient up to fp32 rounding, and every rank ends with the same
// weights and optimiser state bit for bit (they step with the same summed gradients).
import { describe, expect, it } from "vitest";
import { Decoder } from "../../engine/model/decoder.js";
import { createRng } from "../../rng.js";
import { resolveTrainerConfig } from "./config.js";
import { applySharedStep, type DataParallelPeers, mergePieces, splitShares } from "./data-parallel.js";
import { ppoUpdate, shareGradients } from "./ppo-update.js";
import type { TrainSample } from "./types.js";
import { createUnits, type TrainUnit } from "./units.js";
import { TINY_UPDATE_MODEL } from "./test-model.js";

function samples(n: number): TrainSample[] {
  const rng = createRng(5);
  return Array.from({ length: n }, (_, i) => {
    const len = 3 + (i % 4);
    return {
      id: i,
      role: i % 3 ? "actor" : "critic-less",
      episode: `e${i}`,
      adapter: "actor",
      temperature: 1,
      tokens: Int32Array.from({ length: 2 + len }, () => rng.int(1, 39)),
      promptLen: 2,
      oldLogp: new Float32Array(len).fill(-Math.log(40)),
      refLogp: null,
      oldValues: null,
      advantages: Float32Array.from({ length: len }, () => rng.next() * 2 - 1),
      returns: new Float32Array(len),
      happoFactor: 1,
    };
  });
}

const trainer = resolveTrainerConfig({ lr: 1e-2, epochs: 2, minibatchSize: 6, maxGradNorm: 0.5 });

function rank(): { model: Decoder; units: Map<string, TrainUnit> } {
  const model = new Decoder(TINY_UPDATE_MODEL, undefined, { trainBase: false, seed: 3 });
  model.addAdapter("actor", { rank: 2, alpha: 2, targets: ["q_proj", "v_proj"] });
  return { model, units: createUnits(model, trainer) };
}

/** The other ranks as plain objects in this process, with the wire's copies. */
function inProcessPeers(ranks: ReturnType<typeof rank>[]): DataParallelPeers {
  return {
    count: ranks.length,
    sent: async () => {},
    async forwards() {
      throw new Error("the update's test scores nothing");
    },
    async gradients(r, req) {
      const p = ranks[r - 1];
      const res = shareGradients(p.model, p.units, trainer, structuredClone(req));
      return { pieces: res.pieces, grads: new Map([...res.grads].map(([k, g]) => [k, g.slice()])) };
    },
    async step(req) {
      for (const p of ranks) applySharedStep(p.model, p.units, trainer, structuredClone(req));
    },
  };
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

describe("data-parallel updates", () => {
  it("split a minibatch by sequence onto the least-loaded rank", () => {
    expect(splitShares([5, 5, 1, 1, 1], 2, (x) => x)).toEqual([
      [5, 1, 1],
      [5, 1],
    ]);
    expect(splitShares([1], 3, (x) => x)).toEqual([[1], [], []]);
  });

  it.each([2, 3])("over %i ranks train like one rank to fp32 rounding, every rank bit-identical", async (n) => {
    const single = rank();
    const one = await ppoUpdate(single.model, single.units, trainer, samples(12), { policy: true, critic: false }, createRng(1));
    const zero = rank();
    const others = Array.from({ length: n - 1 }, rank);
    const dp = await ppoUpdate(zero.model, zero.units, trainer, samples(12), { policy: true, critic: false }, createRng(1), {
      peers: inProcessPeers(others),
    });
    const w = (r: ReturnType<typeof rank>) => r.model.adapters.get("actor")!.params.data;
    const moments = (r: ReturnType<typeof rank>) => r.units.get("adapter:actor")!.optimizer.state.moments;
    expect(dp.steps).toBe(one.steps);
    expect(maxDiff(w(zero), w(single))).toBeGreaterThan(0); // the update moved
    const moved = maxDiff(w(single), rank().model.adapters.get("actor")!.params.data);
    expect(maxDiff(w(zero), w(single))).toBeLessThan(1e-5 * moved);
    for (const o of others) {
      expect(maxDiff(w(o), w(zero))).toBe(0);
      for (const [g, mv] of moments(zero)) expect(maxDiff(moments(o).get(g)!.v, mv.v)).toBe(0);
    }
    for (const role of ["actor", "critic-less"]) {
      expect(dp.roles[role].pgLoss).toBeCloseTo(one.roles[role].pgLoss, 5);
      expect(dp.roles[role].clipFrac).toBeCloseTo(one.roles[role].clipFrac, 6);
      expect(dp.roles[role].entropy).toBeCloseTo(one.roles[role].entropy, 5);
    }
  });

  it("merge a role's pieces as one chunk: losses add, means weigh by tokens", () => {
    const m = { pgLoss: 1, clipFrac: 0.5, approxKl: 0.1, entropy: 2, klRef: Number.NaN, valueLoss: 0, explainedVariance: 0 };
    const [r] = mergePieces([
      { role: "a", tokens: 3, norm: 3, units: ["x"], metrics: m },
      { role: "a", tokens: 1, norm: 4, units: ["x"], metrics: { ...m, pgLoss: 2, clipFrac: 0.1, klRef: 1 } },
    ]);
    expect(r.metrics.pgLoss).toBe(3);
    expect(r.metrics.clipFrac).toBeCloseTo(0.4, 12);
    expect(r.metrics.klRef).toBe(1);
    expect(r.norm).toBe(5);
  });
});
