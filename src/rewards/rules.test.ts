// The paper rules on hand-built trajectories: M-ASK marginal gain (search/summarize/update share
// F1(a_t) − F1(a_{t−1}), <end> earns 0) and iterative coding (plan/code R_t − R_{t−1}, reflect R_{t+1} − R_t).

import { describe, expect, it } from "vitest";
import { combineRewards } from "./combine.js";
import { formatReward } from "./format.js";
import { finalOutcome, sharedOutcome, splitOutcome } from "./outcome.js";
import { codingTrajectory, maskTrajectory, rec, traj } from "./test-trajectories.js";
import { marginalGain, perTurnScore } from "./turns.js";

const byNodeTurn = (rewards: { node: string; turn: number; value: number | number[] }[]) =>
  Object.fromEntries(rewards.map((r) => [`${r.node}@${r.turn}`, typeof r.value === "number" ? Number(r.value.toFixed(10)) : r.value]));

describe("M-ASK rule", () => {
  const f1 = () => ({ 0: 0.2, 1: 0.5, 2: 0.4 }); // F1(a_0) from plan's answer, then per turn
  const isEnd = (r: { parsed: unknown }) => (r.parsed as { value?: { action?: string } })?.value?.action === "end";

  it("gives search, summarize and update at turn t the marginal gain; <end> gets 0", () => {
    const t = maskTrajectory();
    const out = combineRewards(t, null, [
      marginalGain(f1, { roles: ["search", "summarize", "update"], isStop: isEnd }),
      perTurnScore(f1, { roles: ["plan", "answer"] }),
    ]);
    expect(out.skipped).toEqual([]);
    expect(byNodeTurn(out.rewards)).toEqual({
      "plan@0": 0.2,
      "search@1": 0.3,
      "summarize@1": 0.3,
      "update@1": 0.3,
      "answer@1": 0.5,
      "search@2": -0.1,
      "summarize@2": -0.1,
      "update@2": -0.1,
      "answer@2": 0.4,
      "search@3": 0,
    });
  });

  it("adds the format term and keeps a per-kind breakdown", () => {
    const out = combineRewards(maskTrajectory(), null, [
      formatReward({ weight: 0.5 }),
      marginalGain(f1, { roles: ["search", "summarize", "update"], isStop: isEnd }),
      perTurnScore(f1, { roles: ["plan", "answer"] }),
    ]);
    const summarize2 = out.rewards.find((r) => r.node === "summarize" && r.turn === 2)!;
    expect(summarize2.value).toBeCloseTo(-0.6);
    expect(summarize2.byKind.format).toBe(-0.5);
    expect(summarize2.byKind.turn).toBeCloseTo(-0.1);
    expect(summarize2.bySource).toEqual({ format: -0.5, "marginal-gain": expect.closeTo(-0.1) });
    expect(out.rewards.find((r) => r.node === "plan")!.byKind).toEqual({ format: 0, node: 0.2 });
  });

  it("uses the configured m0 when the series has no turn 0", () => {
    const t = traj([rec({ node: "search", turn: 1 })]);
    const out = combineRewards(t, null, [marginalGain(() => ({ 1: 0.7 }), { m0: 0.5 })]);
    expect(out.rewards[0].value).toBeCloseTo(0.2);
  });
});

describe("iterative coding rule", () => {
  const passRate = () => ({ 1: 0.25, 2: 0.5, 3: 1 });

  it("gives plan/code R_t − R_{t−1} and reflect R_{t+1} − R_t", () => {
    const out = combineRewards(codingTrajectory(), null, [
      marginalGain(passRate, { roles: ["plan", "code"], m0: 0 }),
      marginalGain(passRate, { roles: ["reflect"], offset: 1 }),
    ]);
    expect(byNodeTurn(out.rewards)).toEqual({
      "plan@1": 0.25,
      "code@1": 0.25,
      "reflect@1": 0.25,
      "plan@2": 0.25,
      "code@2": 0.25,
      "reflect@2": 0.5,
      "plan@3": 0.5,
      "code@3": 0.5,
    });
  });

  it("skips a reflect whose next turn never ran, with a reason", () => {
    const out = combineRewards(codingTrajectory(2), null, [
      marginalGain(() => ({ 1: 0.25, 2: 0.5 }), { roles: ["plan", "code"] }),
      marginalGain(() => ({ 1: 0.25, 2: 0.5 }), { roles: ["reflect"], offset: 1 }),
    ]);
    expect(out.skipped).toEqual([{ recordIndex: 7, node: "reflect", visit: 1, reasons: ["marginal-gain: no metric for turn 3"] }]);
    expect(out.rewards.some((r) => r.node === "reflect" && r.turn === 2)).toBe(false);
    expect(out.rewards.find((r) => r.node === "reflect")?.value).toBeCloseTo(0.25);
  });
});

describe("outcome helpers", () => {
  const t = traj([rec({ node: "decompose" }), rec({ node: "retrieve", kind: "tool" }), rec({ node: "answer" })]);
  const score = () => 0.6;

  it("shared: every role gets the full score", () => {
    expect(combineRewards(t, null, [sharedOutcome(score)]).rewards.map((r) => r.value)).toEqual([0.6, 0.6]);
  });
  it("split: the score is divided (equally or by role weight)", () => {
    expect(combineRewards(t, null, [splitOutcome(score)]).rewards.map((r) => r.value)).toEqual([0.3, 0.3]);
    const weighted = combineRewards(t, null, [splitOutcome(score, { weights: { decompose: 1, answer: 2 } })]).rewards.map(
      (r) => r.value as number,
    );
    expect(weighted[0]).toBeCloseTo(0.2);
    expect(weighted[1]).toBeCloseTo(0.4);
  });
  it("final: only the last agent's action is rewarded (MARFT)", () => {
    expect(combineRewards(t, null, [finalOutcome(score)]).rewards.map((r) => r.value)).toEqual([0, 0.6]);
  });
});
