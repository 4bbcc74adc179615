// Hand-computed cases for GRPO, RLOO and Dr.GRPO: group keys, singleton and flat groups, scores that
// include per-token rewards. Expected numbers are written out, not produced by the code under test.

import { describe, expect, it } from "vitest";
import { drGrpo, grpo, rloo } from "./group-baseline.js";
import type { AdvantageInput, SampleMeta } from "./types.js";

const m = (task: string, role: string, reward: number, turn = 0): SampleMeta => ({
  episode: `${task}-${role}-${reward}`,
  role,
  model: "m",
  group: task,
  turn,
  reward,
});

// Group (a, coder, 0) has scores 1, 2, 4; (a, planner, 0) has 0, 1; (b, coder, 0) is a singleton.
// Each sample: one prompt token, two response tokens.
function batch(): AdvantageInput {
  const samples = [
    m("a", "coder", 1),
    m("a", "coder", 2),
    m("a", "planner", 0),
    m("a", "coder", 4),
    m("b", "coder", 3),
    m("a", "planner", 1),
  ];
  const offsets = samples.map((_, s) => 3 * s).concat(3 * samples.length);
  const mask = samples.flatMap(() => [0, 1, 1]);
  return { samples, offsets, mask };
}

function expectClose(actual: ArrayLike<number>, expected: number[], digits = 6): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => {
    expect(actual[i], `index ${i}`).toBeCloseTo(e, digits);
  });
}

describe("grpo", () => {
  it("divides by the unbiased group std", () => {
    const out = grpo.estimate(batch(), { eps: 0 });
    // coder group: mean 7/3, unbiased var = (16/9 + 1/9 + 25/9)/2 = 7/3; planner: mean 0.5, std √0.5
    const sd = Math.sqrt(7 / 3);
    expectClose(out.sampleAdvantages!, [-4 / 3 / sd, -1 / 3 / sd, -0.5 / Math.sqrt(0.5), 5 / 3 / sd, 0, 0.5 / Math.sqrt(0.5)]);
    expect(out.metrics.groups).toBe(3);
    expect(out.metrics.singletonGroups).toBe(1);
    expectClose(out.advantages.slice(0, 3), [0, -4 / 3 / sd, -4 / 3 / sd]);
  });

  it("gives 0 (not NaN) for a flat group and counts it", () => {
    const samples = [m("a", "r", 1), m("a", "r", 1)];
    const out = grpo.estimate({ samples, offsets: [0, 1, 2], mask: [1, 1] });
    expectClose(out.advantages, [0, 0]);
    expect(out.metrics.zeroStdGroups).toBe(1);
  });

  it("groups by the fields asked for", () => {
    // by task only: group a = {1, 2, 0, 4, 1}, mean 1.6, unbiased var = (0.36+0.16+2.56+5.76+0.36)/4 = 2.3
    const out = grpo.estimate(batch(), { groupBy: ["task"], eps: 0 });
    const sd = Math.sqrt(2.3);
    expectClose(out.sampleAdvantages!, [-0.6 / sd, 0.4 / sd, -1.6 / sd, 2.4 / sd, 0, -0.6 / sd]);
  });

  it("keeps turns apart by default", () => {
    const samples = [m("a", "r", 0, 0), m("a", "r", 1, 1)];
    const out = grpo.estimate({ samples, offsets: [0, 1, 2], mask: [1, 1] });
    expect(out.metrics.singletonGroups).toBe(2);
  });

  it("adds masked per-token rewards to the score", () => {
    const samples = [m("a", "r", 0), m("a", "r", 0)];
    // scores: 0 + 0.5 (token 1; token 0 is masked) = 0.5 and 0 → mean 0.25, std √0.125
    const out = grpo.estimate({ samples, offsets: [0, 2, 3], mask: [0, 1, 1], tokenRewards: [9, 0.5, 0] }, { eps: 0 });
    expectClose(out.sampleAdvantages!, [0.25 / Math.sqrt(0.125), -0.25 / Math.sqrt(0.125)]);
  });

  it("rejects gamma, which does not apply", () => {
    expect(() => grpo.estimate(batch(), { gamma: 0.9 })).toThrow(/gamma/);
  });
});

describe("rloo", () => {
  it("subtracts the mean of the other samples", () => {
    const out = rloo.estimate(batch());
    // coder: 1 − (2+4)/2 = −2, 2 − (1+4)/2 = −0.5, 4 − (1+2)/2 = 2.5; planner: 0 − 1 = −1, 1 − 0 = 1
    expectClose(out.sampleAdvantages!, [-2, -0.5, -1, 2.5, 0, 1]);
    expect(out.metrics.singletonGroups).toBe(1);
  });
});

describe("dr-grpo", () => {
  it("subtracts the group mean without dividing by the std", () => {
    const out = drGrpo.estimate(batch());
    expectClose(out.sampleAdvantages!, [-4 / 3, -1 / 3, -0.5, 5 / 3, 0, 0.5]);
    expectClose(out.returns.slice(3, 6), [0, -1 / 3, -1 / 3]);
  });

  it("can whiten afterwards per role", () => {
    const out = drGrpo.estimate(batch(), { normalize: "role" });
    // coder tokens carry −4/3, −1/3, 5/3 (twice each) and 0 (the singleton): mean 0, var = (16+1+25)/9/4 = 7/6
    const sd = Math.sqrt(7 / 6);
    expectClose(out.sampleAdvantages!, [-4 / 3 / sd, -1 / 3 / sd, -1, 5 / 3 / sd, 0, 1], 5);
  });
});
