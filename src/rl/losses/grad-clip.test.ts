// Global grad-norm clipping: norm over several arrays, in-place scaling, pre-clip norm returned,
// non-finite norms refused.

import { describe, expect, it } from "vitest";
import { clipGradNorm, gradNorm } from "./grad-clip.js";

describe("clipGradNorm", () => {
  it("scales every array by maxNorm / norm and returns the pre-clip norm", () => {
    const g = [new Float32Array([3, 0]), new Float32Array([4])];
    expect(clipGradNorm(g, 1)).toBeCloseTo(5, 12);
    expect(g[0][0]).toBeCloseTo(0.6, 6);
    expect(g[1][0]).toBeCloseTo(0.8, 6);
    expect(gradNorm(g)).toBeCloseTo(1, 5);
  });
  it("leaves gradients under the limit alone", () => {
    const g = [new Float32Array([0.3, 0.4])];
    expect(clipGradNorm(g, 1)).toBeCloseTo(0.5, 7);
    expect([...g[0]]).toEqual([0.3, 0.4].map(Math.fround));
  });
  it("refuses a non-finite norm unless told otherwise, without touching the arrays", () => {
    const g = [new Float32Array([Number.NaN, 1])];
    expect(() => clipGradNorm(g, 1)).toThrow(/not|NaN/);
    expect(clipGradNorm(g, 1, { errorIfNonfinite: false })).toBeNaN();
    expect(g[0][1]).toBe(1);
  });
  it("rejects maxNorm ≤ 0", () => {
    expect(() => clipGradNorm([], 0)).toThrow(/maxNorm/);
  });
});
