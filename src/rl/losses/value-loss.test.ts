// Clipped value loss: each branch by hand (unclipped, clipped wins, Huber), finite differences with
// and without clipping/Huber, and a loud error when clipping lacks old values.

import { describe, expect, it } from "vitest";
import { centralDifferences, maxAbsDiff } from "../gradcheck.js";
import * as fx from "./fixtures.js";
import { valueLoss } from "./value-loss.js";

const one = (v: number, old: number, ret: number, opts = {}) =>
  valueLoss({ offsets: [0, 1], mask: [1], values: [v], oldValues: [old], returns: [ret] }, opts);

describe("valueLoss by hand", () => {
  it("squared error ½e² with dvalue = e when the unclipped error is larger", () => {
    // V = 1.5, old = 1, R = 1, ε = 0.2: e1 = 0.5 → 0.125; clipped V = 1.2, e2 = 0.2 → 0.02
    const r = one(1.5, 1, 1, { clip: 0.2 });
    expect(r.loss).toBeCloseTo(0.125, 12);
    expect(r.grads.dvalue![0]).toBeCloseTo(0.5, 7);
    expect(r.metrics.valueClipFrac).toBe(0);
  });
  it("no gradient when the clipped error is larger", () => {
    // V = 1.1, old = 0.5, R = 1: e1 = 0.1 → 0.005; clipped V = 0.7, e2 = −0.3 → 0.045
    const r = one(1.1, 0.5, 1, { clip: 0.2 });
    expect(r.loss).toBeCloseTo(0.045, 12);
    expect(r.grads.dvalue![0]).toBe(0);
    expect(r.metrics.valueClipFrac).toBe(1);
  });
  it("Huber: linear beyond δ", () => {
    // e = −0.7, δ = 0.3: 0.3·(0.7 − 0.15) = 0.165, dvalue = −0.3; coef 2 doubles both
    const r = one(0.5, 0.5, 1.2, { huber: 0.3, coef: 2 });
    expect(r.loss).toBeCloseTo(0.33, 12);
    expect(r.grads.dvalue![0]).toBeCloseTo(-0.6, 7);
  });
  it("needs oldValues when clipping", () => {
    expect(() => valueLoss({ offsets: [0, 1], mask: [1], values: [0], returns: [1] }, { clip: 0.2 })).toThrow(/oldValues/);
  });
});

describe("valueLoss gradient", () => {
  const cases = [{}, { clip: 0.2 }, { huber: 0.25 }, { clip: 0.2, huber: 0.25, coef: 0.5 }];
  for (const mode of fx.modes) {
    for (const c of cases) {
      it(`matches finite differences (${mode}, ${JSON.stringify(c)})`, () => {
        const base = { offsets: fx.offsets, mask: fx.mask, oldValues: fx.oldValues, returns: fx.returns };
        const opts = { ...c, mode, normConst: 7 };
        const r = valueLoss({ ...base, values: fx.values }, opts);
        const fd = centralDifferences((x) => valueLoss({ ...base, values: x }, opts).loss, fx.values);
        expect(maxAbsDiff(r.grads.dvalue!, fd)).toBeLessThan(1e-6);
      });
    }
  }

  it("clips some fixture tokens and not others", () => {
    const r = valueLoss(
      { offsets: fx.offsets, mask: fx.mask, values: fx.values, oldValues: fx.oldValues, returns: fx.returns },
      { clip: 0.2 },
    );
    expect(r.metrics.valueClipFrac).toBeGreaterThan(0);
    expect(r.metrics.valueClipFrac).toBeLessThan(1);
  });
});
