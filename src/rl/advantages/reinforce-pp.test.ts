// Hand-computed REINFORCE++ cases: token rewards plus the record's reward, discounted returns inside
// one record, and whitening per scope. Expected numbers are written out. The KL-shaped reward is the
// runtime's job (test/runtime/kl-in-reward.test.ts); here it arrives folded into the token rewards.

import { describe, expect, it } from "vitest";
import { reinforcePP } from "./reinforce-pp.js";
import type { SampleMeta } from "./types.js";

const meta: SampleMeta = { episode: "e", role: "r", model: "m", group: "t", turn: 0, reward: 1 };
// prompt token + 3 response tokens; token rewards −0.1·KL with KL = [_, 0.5, 0, 0.5]
const input = { offsets: [0, 4], mask: [0, 1, 1, 1], tokenRewards: [0, -0.05, 0, -0.05], samples: [meta] };

function expectClose(actual: ArrayLike<number>, expected: number[], digits = 6): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => {
    expect(actual[i], `index ${i}`).toBeCloseTo(e, digits);
  });
}

describe("reinforce-pp", () => {
  it("adds the record's reward on its last token and sums returns (γ = 1)", () => {
    // r = [−0.05, 0, −0.05 + 1] → G = [0.9, 0.95, 0.95]
    const out = reinforcePP.estimate(input, { normalize: "none" });
    expectClose(out.returns, [0, 0.9, 0.95, 0.95]);
    expectClose(out.advantages, [0, 0.9, 0.95, 0.95]);
    expect(out.metrics.returnMean).toBeCloseTo(2.8 / 3, 6);
  });

  it("discounts with γ", () => {
    // G2 = 0.95; G1 = 0 + 0.5·0.95 = 0.475; G0 = −0.05 + 0.5·0.475 = 0.1875
    const out = reinforcePP.estimate(input, { gamma: 0.5, normalize: "none" });
    expectClose(out.returns, [0, 0.1875, 0.475, 0.95]);
  });

  it("whitens the returns over the batch", () => {
    // G = [0.9, 0.95, 0.95]: mean 2.8/3, pop. var = (1/900 + 2/3600)/3 = 1/1800 → [−√2, 1/√2, 1/√2]
    const out = reinforcePP.estimate(input, { normalize: "global" });
    expectClose(out.advantages, [0, -Math.SQRT2, Math.SQRT1_2, Math.SQRT1_2], 4);
  });

  it("works from the record's reward alone", () => {
    const { tokenRewards: _r, ...bare } = input;
    expectClose(reinforcePP.estimate(bare, { normalize: "none" }).returns, [0, 1, 1, 1]);
  });

  it("refuses its former KL options: the trainer's kl settings are the one KL mechanism", () => {
    expect(() => reinforcePP.estimate(input, { klCoef: 0.01 } as object)).toThrow(/klCoef is not an estimator option/);
    expect(() => reinforcePP.estimate(input, { klEstimator: "k1" } as object)).toThrow(/placement: "reward"/);
  });
});
