// Summing loss terms: losses add, gradients of the same kind add, metric names must not collide.

import { describe, expect, it } from "vitest";
import { entropyBonus } from "./entropy-bonus.js";
import * as fx from "./fixtures.js";
import { klPenaltyLoss } from "./kl-penalty.js";
import { ppoClipLoss } from "./ppo-clip.js";
import { sumLosses } from "./sum-losses.js";

describe("sumLosses", () => {
  const layout = { offsets: fx.offsets, mask: fx.mask };
  const ppo = ppoClipLoss({ ...layout, logp: fx.logp, oldLogp: fx.oldLogp, advantages: fx.advantages });
  const kl = klPenaltyLoss({ ...layout, logp: fx.logp, refLogp: fx.refLogp }, { coef: 0.1 });
  const ent = entropyBonus({ ...layout, entropy: fx.entropy }, { coef: 0.01 });

  it("adds losses and same-kind gradients", () => {
    const total = sumLosses(ppo, kl, ent);
    expect(total.loss).toBeCloseTo(ppo.loss + kl.loss + ent.loss, 12);
    fx.mask.forEach((_, t) => {
      expect(total.grads.dlogp![t]).toBeCloseTo(ppo.grads.dlogp![t] + kl.grads.dlogp![t], 6);
    });
    expect([...total.grads.dentropy!]).toEqual([...ent.grads.dentropy!]);
    expect(total.metrics.totalLoss).toBe(total.loss);
    expect(total.metrics.pgLoss).toBe(ppo.loss);
    expect(ppo.grads.dlogp![1]).not.toBe(total.grads.dlogp![1]); // inputs untouched
  });

  it("refuses two terms with the same metric names", () => {
    expect(() => sumLosses(ppo, ppo)).toThrow(/pgLoss/);
  });
});
