// rewardModelReward over fake rate services: one batched call per step, one judge record per judged
// item (record and trajectory modes), the scores as rewards of kind "model", and a failed call
// recorded as errors that the failure policy turns into skips or values, never a silent 0.
import { describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import type { RateRequest } from "./model-calls.js";
import type { RewardServices } from "./model-rules.js";
import { rewardModelReward } from "./reward-model.js";
import { rec, traj } from "./test-trajectories.js";

const episode = (id: string) =>
  traj(
    [
      rec({ node: "plan", prompt: "plan:", rawOutput: "p" }),
      rec({ node: "tool", kind: "tool" }),
      rec({ node: "answer", prompt: [{ role: "user", content: "q" }], rawOutput: `${id}-answer` }),
    ],
    id,
  );

function services(rate: (req: RateRequest) => number[] | Error): RewardServices & { calls: RateRequest[] } {
  const calls: RateRequest[] = [];
  return {
    calls,
    seed: 0,
    step: 1,
    complete: async () => {
      throw new Error("unused");
    },
    rate: async (_model, req) => {
      calls.push(req);
      const r = rate(req);
      if (r instanceof Error) throw r;
      return { scores: r };
    },
  };
}

describe("rewardModelReward", () => {
  it("scores every selected record in one call and rewards each with its own score", async () => {
    const rule = rewardModelReward({ model: "rm", agreeWith: () => 1 });
    const batch = ["a", "b"].map((id) => ({ trajectory: episode(id), task: null, groupKey: "g" }));
    const svc = services((req) => req.items.map((_, i) => i / 10));
    const stats = await rule.prepare(batch, svc);
    expect(svc.calls).toHaveLength(1);
    expect(svc.calls[0].items[1]).toEqual({ prompt: [{ role: "user", content: "q" }], response: "a-answer" });
    expect(stats).toMatchObject({ calls: 1, failures: 0, cacheHits: 0 });
    expect(stats.meanScore).toBeCloseTo(0.15);
    const js = batch[1].trajectory.judgements!;
    expect(js.map((j) => [j.recordIndex, j.score, j.judge, j.metric])).toEqual([
      [0, 0.2, "model:rm", 1],
      [2, 0.3, "model:rm", 1],
    ]);
    expect(js[1].input).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "b-answer" },
    ]);
    expect(rule.fn(batch[1].trajectory, null)).toEqual([
      { recordIndex: 0, kind: "model", value: 0.2 },
      { recordIndex: 2, kind: "model", value: 0.3 },
    ]);
  });

  it('mode "trajectory" scores the last selected record and shares its score', async () => {
    const rule = rewardModelReward({ model: "rm", mode: "trajectory", name: "rm-episode" });
    const t = episode("a");
    await rule.prepare(
      [{ trajectory: t, task: null, groupKey: "g" }],
      services(() => [0.7]),
    );
    expect(t.judgements!.map((j) => [j.rule, j.mode, j.recordIndex, j.input])).toEqual([
      ["rm-episode", "trajectory", null, expect.any(Array)],
    ]);
    expect(rule.fn(t, null)).toEqual([
      { recordIndex: 0, kind: "model", value: 0.7 },
      { recordIndex: 2, kind: "model", value: 0.7 },
    ]);
  });

  it("a failed call becomes error records: skipped by default, a fixed value on request", async () => {
    const t = episode("a");
    const rule = rewardModelReward({ model: "rm", roles: ["answer"] });
    const stats = await rule.prepare(
      [{ trajectory: t, task: null, groupKey: "g" }],
      services(() => new Error("REWARD_HEAD_MISSING")),
    );
    expect(stats).toMatchObject({ calls: 1, failures: 1 });
    expect(t.judgements![0]).toMatchObject({ score: null, error: "REWARD_HEAD_MISSING" });
    expect(rule.fn(t, null)).toEqual([{ recordIndex: 2, skip: true, reason: "judge failed: REWARD_HEAD_MISSING" }]);
    const fixed = rewardModelReward({ model: "rm", roles: ["answer"], onFailure: { value: -1 } });
    expect(fixed.fn(t, null)).toEqual([{ recordIndex: 2, kind: "model", value: -1 }]);
    const nan = episode("b");
    await rule.prepare(
      [{ trajectory: nan, task: null, groupKey: "g" }],
      services(() => [Number.NaN]),
    );
    expect(nan.judgements![0]).toMatchObject({ score: null, error: "the reward model returned NaN" });
  });

  it("stops the step on a transport failure instead of recording it as a score", async () => {
    const rule = rewardModelReward({ model: "rm" });
    const batch = [{ trajectory: episode("a"), task: null, groupKey: "g" }];
    const svc = services(() => new MasoError("NATS_DISCONNECTED", "server gone"));
    await expect(rule.prepare(batch, svc)).rejects.toMatchObject({ code: "NATS_DISCONNECTED" });
  });

  it("splits a large step into calls of batchSize items", async () => {
    const rule = rewardModelReward({ model: "rm", batchSize: 3 });
    const batch = ["a", "b", "c"].map((id) => ({ trajectory: episode(id), task: null, groupKey: id }));
    const svc = services((req) => req.items.map(() => 1));
    expect((await rule.prepare(batch, svc)).calls).toBe(2);
    expect(svc.calls.map((c) => c.items.length)).toEqual([3, 3]);
  });
});
