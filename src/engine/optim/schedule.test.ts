import { describe, expect, it } from "vitest";
import { lrAt } from "./schedule.js";

describe("learning-rate schedules", () => {
  it("linear warmup reaches the peak at the last warmup step, then holds (constant)", () => {
    const s = { kind: "constant" as const, lr: 1e-3, warmupSteps: 4 };
    expect([0, 1, 2, 3, 4, 100].map((t) => lrAt(s, t))).toEqual([2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3]);
  });

  it("cosine decays from the peak to minLr over totalSteps, half way at the midpoint", () => {
    const s = { kind: "cosine" as const, lr: 1e-3, warmupSteps: 10, totalSteps: 110, minLr: 1e-4 };
    expect(lrAt(s, 10)).toBeCloseTo(1e-3, 12);
    expect(lrAt(s, 60)).toBeCloseTo(5.5e-4, 12); // minLr + (lr - minLr) / 2
    expect(lrAt(s, 110)).toBeCloseTo(1e-4, 12);
    expect(lrAt(s, 500)).toBeCloseTo(1e-4, 12);
  });

  it("cosine without totalSteps is a clear error", () => {
    expect(() => lrAt({ kind: "cosine", lr: 1 }, 0)).toThrow(/totalSteps/);
  });
});
