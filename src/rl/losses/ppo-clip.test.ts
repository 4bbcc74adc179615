// PPO clipped surrogate: hand-computed single-token cases for each branch (in range, clipped high/low,
// dual clip), and the gradient against central finite differences in every aggregation mode.

import { describe, expect, it } from "vitest";
import { centralDifferences, maxAbsDiff } from "../gradcheck.js";
import * as fx from "./fixtures.js";
import { ppoClipLoss } from "./ppo-clip.js";

function one(logRatio: number, adv: number, opts = {}) {
  return ppoClipLoss({ offsets: [0, 1], mask: [1], logp: [-1 + logRatio], oldLogp: [-1], advantages: [adv] }, opts);
}

describe("ppoClipLoss by hand", () => {
  it("inside the clip range: ℓ = −A·r, dℓ/dlogp = −A·r", () => {
    const r = one(Math.log(1.1), 2);
    expect(r.loss).toBeCloseTo(-2.2, 12);
    expect(r.grads.dlogp![0]).toBeCloseTo(-2.2, 6);
    expect(r.metrics.clipFrac).toBe(0);
  });
  it("above 1 + ε_high with A > 0: ℓ = −A·(1 + ε_high), no gradient", () => {
    const r = one(Math.log(1.5), 1, { clipHigh: 0.28 });
    expect(r.loss).toBeCloseTo(-1.28, 12);
    expect(r.grads.dlogp![0]).toBe(0);
    expect(r.metrics.clipFracHigh).toBe(1);
  });
  it("below 1 − ε_low with A < 0: ℓ = −A·(1 − ε_low), no gradient", () => {
    const r = one(Math.log(0.5), -1, { clipLow: 0.1 });
    expect(r.loss).toBeCloseTo(0.9, 12);
    expect(r.grads.dlogp![0]).toBe(0);
    expect(r.metrics.clipFracLow).toBe(1);
  });
  it("ratio far above with A < 0: unclipped −A·r, or −c·A with dual clip", () => {
    const plain = one(Math.log(4), -1);
    expect(plain.loss).toBeCloseTo(4, 12);
    expect(plain.grads.dlogp![0]).toBeCloseTo(4, 5);
    const dual = one(Math.log(4), -1, { dualClip: 3 });
    expect(dual.loss).toBeCloseTo(3, 12);
    expect(dual.grads.dlogp![0]).toBe(0);
    expect(dual.metrics.dualClipFrac).toBe(1);
  });
  it("reports approximate KL in k1 and k3 forms", () => {
    const r = one(0.2, 1, { clipHigh: 0.5 });
    expect(r.metrics.approxKl).toBeCloseTo(-0.2, 12);
    expect(r.metrics.approxKlK3).toBeCloseTo(Math.exp(0.2) - 1 - 0.2, 12);
    expect(r.metrics.ratioMean).toBeCloseTo(Math.exp(0.2), 12);
  });
});

describe("ppoClipLoss gradient", () => {
  const input = { offsets: fx.offsets, mask: fx.mask, oldLogp: fx.oldLogp, advantages: fx.advantages };
  for (const mode of fx.modes) {
    for (const dualClip of [undefined, 3]) {
      it(`matches finite differences (${mode}, dualClip ${dualClip})`, () => {
        const opts = { mode, dualClip, clipLow: 0.2, clipHigh: 0.28, normConst: 5 };
        const r = ppoClipLoss({ ...input, logp: fx.logp }, opts);
        const fd = centralDifferences((x) => ppoClipLoss({ ...input, logp: x }, opts).loss, fx.logp);
        expect(maxAbsDiff(r.grads.dlogp!, fd)).toBeLessThan(1e-6);
        expect(r.grads.dlogp!.some((g) => g !== 0)).toBe(true);
      });
    }
  }

  it("reports clip fractions over response tokens", () => {
    const r = ppoClipLoss({ ...input, logp: fx.logp }, { clipLow: 0.2, clipHigh: 0.28, dualClip: 3 });
    // 8 response tokens; log-ratios 0.4 (A=1) clipped high; −0.5 (A=−1) clipped low; 1.5 (A=−1) dual-clipped
    expect(r.metrics.clipFracHigh).toBeCloseTo(1 / 8, 12);
    expect(r.metrics.clipFracLow).toBeCloseTo(1 / 8, 12);
    expect(r.metrics.dualClipFrac).toBeCloseTo(1 / 8, 12);
  });

  it("rejects NaN inputs and mismatched lengths", () => {
    const bad = [...fx.logp];
    bad[2] = Number.NaN;
    expect(() => ppoClipLoss({ ...input, logp: bad })).toThrow(/logp\[2\]/);
    expect(() => ppoClipLoss({ ...input, logp: fx.logp.slice(1) })).toThrow(/logp has 11/);
    expect(() => ppoClipLoss({ ...input, logp: fx.logp }, { dualClip: 0.5 })).toThrow(/dualClip/);
  });
});
