// Hand-computed REINFORCE++ cases: KL-shaped token rewards, discounted returns inside one record, and
// whitening per scope. Expected numbers are written out.

import { describe, expect, it } from "vitest";
import { reinforcePP } from "./reinforce-pp.js";
import type { SampleMeta } from "./types.js";

const meta: SampleMeta = { episode: "e", role: "r", model: "m", task: "t", turn: 0, reward: 1 };
// prompt token + 3 response tokens; k1 KL = logp − ref = [_, 0.5, 0, 0.5]
const input = { offsets: [0, 4], mask: [0, 1, 1, 1], logp: [0, -1, -2, -0.5], refLogp: [0, -1.5, -2, -1], samples: [meta] };

function expectClose(actual: ArrayLike<number>, expected: number[], digits = 6): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => {
    expect(actual[i], `index ${i}`).toBeCloseTo(e, digits);
  });
}

describe("reinforce-pp", () => {
  it("folds −β·KL into the token rewards and sums returns (γ = 1)", () => {
    // r = [−0.05, 0, −0.05 + 1] → G = [0.9, 0.95, 0.95]
    const out = reinforcePP.estimate(input, { klCoef: 0.1, normalize: "none" });
    expectClose(out.returns, [0, 0.9, 0.95, 0.95]);
    expectClose(out.advantages, [0, 0.9, 0.95, 0.95]);
    expect(out.metrics.klMean).toBeCloseTo(1 / 3, 6);
  });

  it("discounts with γ", () => {
    // G2 = 0.95; G1 = 0 + 0.5·0.95 = 0.475; G0 = −0.05 + 0.5·0.475 = 0.1875
    const out = reinforcePP.estimate(input, { klCoef: 0.1, gamma: 0.5, normalize: "none" });
    expectClose(out.returns, [0, 0.1875, 0.475, 0.95]);
  });

  it("whitens the returns over the batch", () => {
    // G = [0.9, 0.95, 0.95]: mean 2.8/3, pop. var = (1/900 + 2/3600)/3 = 1/1800 → [−√2, 1/√2, 1/√2]
    const out = reinforcePP.estimate(input, { klCoef: 0.1, normalize: "global" });
    expectClose(out.advantages, [0, -Math.SQRT2, Math.SQRT1_2, Math.SQRT1_2], 4);
  });

  it("uses the k3 estimator when asked", () => {
    // k3 at d = 0.5: e^−0.5 + 0.5 − 1 = 0.10653066; r = [−0.0106531, 0, 0.9893469]
    const out = reinforcePP.estimate(input, { klCoef: 0.1, klEstimator: "k3", normalize: "none" });
    expectClose(out.returns, [0, 0.9893469 - 0.0106531, 0.9893469, 0.9893469]);
  });

  it("needs logp and refLogp unless klCoef is 0", () => {
    const { logp: _l, refLogp: _r, ...bare } = input;
    expect(() => reinforcePP.estimate(bare)).toThrow(/refLogp/);
    expectClose(reinforcePP.estimate(bare, { klCoef: 0, normalize: "none" }).returns, [0, 1, 1, 1]);
  });
});
