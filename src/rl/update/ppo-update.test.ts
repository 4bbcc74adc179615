// The approximate-KL guard inside the update: a minibatch too far from the sampling policy is
// skipped (no optimiser step, weights untouched) and, when it is one chunk, costs no backward.
import { describe, expect, it, vi } from "vitest";
import { Decoder } from "../../engine/model/decoder.js";
import { createRng } from "../../rng.js";
import { resolveTrainerConfig } from "./config.js";
import { ppoUpdate } from "./ppo-update.js";
import type { TrainSample } from "./types.js";
import { createUnits } from "./units.js";
import { TINY_UPDATE_MODEL } from "./test-model.js";

const cfg = TINY_UPDATE_MODEL;

/** Samples whose recorded sampling log-probs are `oldLogp` for every response token. */
function samples(oldLogp: number): TrainSample[] {
  return Array.from({ length: 4 }, (_, i) => ({
    id: i,
    role: "actor",
    episode: `e${i}`,
    adapter: "actor",
    temperature: 1,
    tokens: Int32Array.from([1, 2 + i, 3, 4, 5, 6]),
    promptLen: 2,
    oldLogp: new Float32Array(4).fill(oldLogp),
    refLogp: null,
    oldValues: null,
    advantages: new Float32Array(4).fill(i % 2 ? 1 : -1),
    returns: new Float32Array(4),
    happoFactor: 1,
  }));
}

async function update(approxKlSkip: number | undefined, oldLogp: number, activationBudgetMb?: number) {
  const model = new Decoder(cfg, undefined, { trainBase: false, seed: 3 });
  model.addAdapter("actor", { rank: 2, alpha: 2, targets: ["q_proj"] });
  const t = resolveTrainerConfig({ lr: 1e-2, epochs: 1, minibatchSize: 0, approxKlSkip, activationBudgetMb });
  const backward = vi.spyOn(model, "backward");
  const before = Float32Array.from(model.adapters.get("actor")!.params.data);
  const report = await ppoUpdate(model, createUnits(model, t), t, samples(oldLogp), { policy: true, critic: false }, createRng(1));
  const moved = model.adapters.get("actor")!.params.data.some((p, i) => p !== before[i]);
  return { report, moved, backwards: backward.mock.calls.length, params: model.adapters.get("actor")!.params.data };
}

describe("ppoUpdate's approximate-KL guard", () => {
  it("skips a one-chunk minibatch far from the sampling policy without running its backward", async () => {
    // every recorded log-prob is -30: the current policy is far from it
    const { report, moved, backwards } = await update(0.01, -30);
    expect(report.steps).toBe(0);
    expect(report.roles.actor.skippedMinibatches).toBe(1);
    expect(moved).toBe(false);
    expect(backwards).toBe(0);
  });

  it("steps a minibatch within the threshold", async () => {
    // near what a fresh model over 40 tokens gives: ratios about 1
    const { report, moved, backwards } = await update(0.5, -Math.log(40));
    expect(report.steps).toBe(1);
    expect(report.roles.actor.skippedMinibatches).toBe(0);
    expect(moved).toBe(true);
    expect(backwards).toBe(1);
  });
});

describe("ppoUpdate's activation budget", () => {
  it("cuts a minibatch into chunks that fit, with the update of the whole minibatch", async () => {
    const whole = await update(undefined, -Math.log(40));
    // a sample keeps 6 tokens × 250 floats of activations and 4 rows × 40 of logits (6.5 KiB):
    // 10 KiB holds one but not two
    const cut = await update(undefined, -Math.log(40), 10 / 1024);
    expect(whole.backwards).toBe(1);
    expect(cut.backwards).toBeGreaterThan(1);
    expect(cut.report.steps).toBe(1);
    const diff = Math.max(...cut.params.map((p, i) => Math.abs(p - whole.params[i])));
    expect(diff).toBeLessThan(1e-6);
    const again = await update(undefined, -Math.log(40));
    expect(whole.params.some((p, i) => p !== again.params[i])).toBe(false);
  });

  it("is a size in MiB", () => {
    expect(() => resolveTrainerConfig({ activationBudgetMb: 0 })).toThrow(/activationBudgetMb/);
    expect(() => resolveTrainerConfig({ activationBudgetMb: Number.NaN })).toThrow(/activationBudgetMb/);
  });
});
