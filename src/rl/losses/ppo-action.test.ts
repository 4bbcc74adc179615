// MARFT's action-level PPO: hand-computed ratio from summed and length-averaged token log-probs, and
// the gradient against central finite differences.

import { describe, expect, it } from "vitest";
import { centralDifferences, maxAbsDiff } from "../gradcheck.js";
import * as fx from "./fixtures.js";
import { ppoActionLoss } from "./ppo-action.js";

describe("ppoActionLoss by hand", () => {
  // one action of two response tokens after a prompt token; token log-ratios 0.05 + 0.05
  const input = { offsets: [0, 3], mask: [0, 1, 1], logp: [0, -1, -2], oldLogp: [5, -1.05, -2.05], advantages: [2] };

  it("uses the summed log-prob: r = e^0.1", () => {
    const r = ppoActionLoss(input);
    expect(r.loss).toBeCloseTo(-2 * Math.exp(0.1), 12); // −2.2103418
    expect([...r.grads.dlogp!].map((g) => +g.toFixed(6))).toEqual([0, -2.210342, -2.210342]);
  });

  it("optionally normalises by length: r = e^0.05, gradient split over the tokens", () => {
    const r = ppoActionLoss(input, { lengthNormalize: true });
    expect(r.loss).toBeCloseTo(-2 * Math.exp(0.05), 12); // −2.1025422
    expect(r.grads.dlogp![1]).toBeCloseTo(-Math.exp(0.05), 6);
  });

  it("clips the action ratio", () => {
    const r = ppoActionLoss({ ...input, oldLogp: [0, -1.2, -2.2] }); // log-ratio 0.4
    expect(r.loss).toBeCloseTo(-2 * 1.2, 12);
    expect(r.grads.dlogp![1]).toBe(0);
    expect(r.metrics.clipFrac).toBe(1);
  });
});

describe("ppoActionLoss gradient", () => {
  // per-action advantages for the fixture's 5 sequences (the empty and all-prompt ones are skipped)
  const advantages = [0.8, -1.5, 3, 0.4, -0.6];
  for (const lengthNormalize of [false, true]) {
    for (const dualClip of [undefined, 2]) {
      it(`matches finite differences (lengthNormalize ${lengthNormalize}, dualClip ${dualClip})`, () => {
        const base = { offsets: fx.offsets, mask: fx.mask, oldLogp: fx.oldLogp, advantages };
        const opts = { lengthNormalize, dualClip, clipHigh: 0.5, clipLow: 0.3 };
        const r = ppoActionLoss({ ...base, logp: fx.logp }, opts);
        const fd = centralDifferences((x) => ppoActionLoss({ ...base, logp: x }, opts).loss, fx.logp);
        expect(maxAbsDiff(r.grads.dlogp!, fd)).toBeLessThan(1e-6);
      });
    }
  }

  it("wants one advantage per action", () => {
    expect(() =>
      ppoActionLoss({ offsets: fx.offsets, mask: fx.mask, logp: fx.logp, oldLogp: fx.oldLogp, advantages: fx.advantages }),
    ).toThrow(/advantages has 12/);
  });
});
