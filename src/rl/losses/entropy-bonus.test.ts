// Entropy bonus: value and dentropy by hand, finite differences per aggregation mode; no dlogp.

import { describe, expect, it } from "vitest";
import { centralDifferences, maxAbsDiff } from "../gradcheck.js";
import { entropyBonus } from "./entropy-bonus.js";
import * as fx from "./fixtures.js";

describe("entropyBonus", () => {
  it("is −coef · mean entropy, with dentropy = −coef/N on response tokens", () => {
    const r = entropyBonus({ offsets: [0, 3], mask: [0, 1, 1], entropy: [9, 1.2, 0.8] }, { coef: 0.01 });
    expect(r.loss).toBeCloseTo(-0.01, 12);
    expect([...r.grads.dentropy!]).toEqual([0, -0.005, -0.005].map(Math.fround));
    expect(r.grads.dlogp).toBeUndefined();
    expect(r.metrics.entropyMean).toBeCloseTo(1, 12);
  });

  for (const mode of fx.modes) {
    it(`matches finite differences (${mode})`, () => {
      const base = { offsets: fx.offsets, mask: fx.mask };
      const opts = { coef: 0.02, mode, normConst: 3 };
      const r = entropyBonus({ ...base, entropy: fx.entropy }, opts);
      const fd = centralDifferences((x) => entropyBonus({ ...base, entropy: x }, opts).loss, fx.entropy);
      expect(maxAbsDiff(r.grads.dentropy!, fd)).toBeLessThan(1e-8);
    });
  }
});
