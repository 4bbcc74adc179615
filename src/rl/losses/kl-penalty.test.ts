// KL-to-reference loss: k1/k2/k3 values and gradients by hand at one token, finite differences in
// every aggregation mode, and clamping.

import { describe, expect, it } from "vitest";
import { centralDifferences, maxAbsDiff } from "../gradcheck.js";
import * as fx from "./fixtures.js";
import { klPenaltyLoss } from "./kl-penalty.js";

const one = (estimator: "k1" | "k2" | "k3", clamp?: number) =>
  klPenaltyLoss({ offsets: [0, 1], mask: [1], logp: [-1], refLogp: [-1.5] }, { coef: 0.1, estimator, clamp });

describe("klPenaltyLoss by hand (logp = −1, ref = −1.5, β = 0.1)", () => {
  it("k1 = logp − ref = 0.5, ∂/∂logp = 1", () => {
    const r = one("k1");
    expect(r.loss).toBeCloseTo(0.05, 12);
    expect(r.grads.dlogp![0]).toBeCloseTo(0.1, 7);
  });
  it("k2 = ½(logp − ref)² = 0.125, ∂/∂logp = 0.5", () => {
    const r = one("k2");
    expect(r.loss).toBeCloseTo(0.0125, 12);
    expect(r.grads.dlogp![0]).toBeCloseTo(0.05, 7);
  });
  it("k3 = exp(ref − logp) − (ref − logp) − 1 = 0.10653066, ∂/∂logp = 1 − e^−0.5 = 0.39346934", () => {
    const r = one("k3");
    expect(r.loss).toBeCloseTo(0.010653066, 9);
    expect(r.grads.dlogp![0]).toBeCloseTo(0.039346934, 7);
    expect(r.metrics.klMean).toBeCloseTo(0.10653066, 8);
  });
  it("clamped tokens get the clamp value and no gradient", () => {
    const r = one("k1", 0.2);
    expect(r.loss).toBeCloseTo(0.02, 12);
    expect(r.grads.dlogp![0]).toBe(0);
  });
});

describe("klPenaltyLoss gradient", () => {
  for (const estimator of ["k1", "k2", "k3"] as const) {
    for (const mode of fx.modes) {
      it(`matches finite differences (${estimator}, ${mode})`, () => {
        const opts = { coef: 0.3, estimator, mode, normConst: 4 };
        const base = { offsets: fx.offsets, mask: fx.mask, refLogp: fx.refLogp };
        const r = klPenaltyLoss({ ...base, logp: fx.logp }, opts);
        const fd = centralDifferences((x) => klPenaltyLoss({ ...base, logp: x }, opts).loss, fx.logp);
        expect(maxAbsDiff(r.grads.dlogp!, fd)).toBeLessThan(1e-6);
      });
    }
  }

  it("requires an explicit coefficient", () => {
    expect(() => klPenaltyLoss({ offsets: [0, 1], mask: [1], logp: [0], refLogp: [0] }, { coef: Number.NaN })).toThrow(/coef/);
  });
});
