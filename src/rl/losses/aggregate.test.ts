// Aggregation weights for every mode, written out by hand, including an empty sequence and overrides.

import { describe, expect, it } from "vitest";
import { aggregationWeights } from "./aggregate.js";

const layout = { offsets: [0, 2, 3, 3], mask: [1, 1, 1] }; // sequences of 2, 1 and 0 response tokens

describe("aggregationWeights", () => {
  it("token-mean divides by the token count", () => {
    [1 / 3, 1 / 3, 1 / 3].forEach((e, i) => {
      expect(aggregationWeights(layout)[i]).toBeCloseTo(e, 15);
    });
  });
  it("seq-mean-token-sum divides by the non-empty sequence count", () => {
    expect([...aggregationWeights(layout, { mode: "seq-mean-token-sum" })]).toEqual([0.5, 0.5, 0.5]);
  });
  it("seq-mean-token-mean averages within, then across sequences", () => {
    expect([...aggregationWeights(layout, { mode: "seq-mean-token-mean" })]).toEqual([0.25, 0.25, 0.5]);
  });
  it("token-sum-norm divides by the constant", () => {
    expect([...aggregationWeights(layout, { mode: "token-sum-norm", normConst: 4 })]).toEqual([0.25, 0.25, 0.25]);
    expect([...aggregationWeights(layout, { mode: "token-sum-norm" })]).toEqual([1, 1, 1]);
  });
  it("takes a global denominator for micro-batches", () => {
    expect([...aggregationWeights(layout, { denominator: 6 })].map((w) => w * 6)).toEqual([1, 1, 1]);
  });
  it("gives zeros, not NaN, when nothing is masked in", () => {
    expect([...aggregationWeights({ offsets: [0, 2], mask: [0, 0] }, { mode: "seq-mean-token-mean" })]).toEqual([0, 0]);
  });
  it("rejects unknown modes and bad constants", () => {
    expect(() => aggregationWeights(layout, { mode: "mean" as never })).toThrow(/unknown aggregation/);
    expect(() => aggregationWeights(layout, { mode: "token-sum-norm", normConst: 0 })).toThrow(/normConst/);
  });
});
