// Old log-probs from the rollout (opt-in): the sampler's log-probs stand in for the scoring forward, and an
// update from them moves the weights as an update from recomputed ones does, to float noise. The
// scoring forward still runs where rollout log-probs cannot be trusted or do not suffice: a weight
// change during the generation, a critic's values, `oldLogProbs: "recompute"`.
import { describe, expect, it } from "vitest";
import { createWorkerGroup, resolveModelSpec, type WorkerGroup } from "../../src/runtime/index.js";
import type { LoraConfig } from "../../src/engine/config.js";
import type { TrainerOptions } from "../../src/rl/update/config.js";
import { promptRequest, tinyConfig } from "./helpers.js";

const lora: LoraConfig = { rank: 4, alpha: 8, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] };

async function group(trainer: TrainerOptions, valueHead = false): Promise<WorkerGroup> {
  const spec = resolveModelSpec({
    name: "m",
    source: { config: tinyConfig(), seed: 3 },
    lora,
    reference: "none",
    ...(valueHead && { valueHead: { hidden: 16 } }),
  });
  return createWorkerGroup(spec, { roles: { r: "a" }, trainer: { lr: 1e-2, epochs: 2, minibatchSize: 4, ...trainer } });
}

const generate = (wg: WorkerGroup, i: number) => wg.generate(promptRequest(i, { adapter: "a", temperature: 0.7, maxNewTokens: 12 }));

/** Generates 8 samples, rewards them, computes log-probs, and runs one update; the computed count and the report. */
async function step(wg: WorkerGroup) {
  const outs = await Promise.all(Array.from({ length: 8 }, (_, i) => generate(wg, i)));
  const { computed } = await wg.computeLogprobs({});
  await wg.assignRewards({
    items: outs.map((o, i) => ({ id: o.sampleHandle!.id, episodeId: `e${i}`, role: "r", reward: (i * 7) % 3, groupKey: `g${i % 2}` })),
  });
  await wg.computeAdvantages({ estimator: "grpo", options: {} });
  const { report } = await wg.update({ policy: true, critic: false });
  return { computed, report };
}

describe("old log-probs from the rollout", () => {
  it("skip the scoring forward and update the weights as recomputed ones do, to float noise", async () => {
    const rollout = await group({ oldLogProbs: "rollout" });
    const recompute = await group({});
    const a = await step(rollout);
    const b = await step(recompute);
    expect(a.computed).toBe(0);
    expect(b.computed).toBe(8);
    expect(a.report.steps).toBe(b.report.steps);
    const wa = rollout.model.adapters.get("a")!.params.data;
    const wb = recompute.model.adapters.get("a")!.params.data;
    const w0 = (await group({})).model.adapters.get("a")!.params.data;
    let moved = 0;
    let apart = 0;
    for (let i = 0; i < wa.length; i++) {
      moved = Math.max(moved, Math.abs(wb[i] - w0[i]));
      apart = Math.max(apart, Math.abs(wa[i] - wb[i]));
    }
    expect(moved).toBeGreaterThan(1e-3); // the update did move the adapter
    expect(apart).toBeLessThan(moved * 1e-3);
  });

  it("are not used for a generation a weight change overlapped", async () => {
    const wg = await group({ oldLogProbs: "rollout" });
    const during = generate(wg, 0);
    wg.weightVersions.bump("weight-sync"); // e.g. a weight sync arrived while the sampler was decoding
    await during;
    await generate(wg, 1);
    expect((await wg.computeLogprobs({})).computed).toBe(1);
  });

  it("leave a critic's values to the scoring forward", async () => {
    const wg = await group({ oldLogProbs: "rollout" }, true);
    await Promise.all([0, 1, 2].map((i) => generate(wg, i)));
    expect((await wg.computeLogprobs({})).computed).toBe(3);
  });

  it("is a checked setting", async () => {
    await expect(group({ oldLogProbs: "sampler" as never })).rejects.toThrow(/oldLogProbs/);
  });
});
