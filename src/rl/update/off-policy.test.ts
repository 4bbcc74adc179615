import { describe, expect, it } from "vitest";
import { emptyImportance, importanceWeights } from "./off-policy.js";

describe("importanceWeights (decoupled PPO's truncated π_prox/π_behav)", () => {
  it("weights each token by exp(prox − behav), cut at the cap, and counts what it cut", () => {
    const stats = emptyImportance();
    const prox = Float32Array.from([-1, -2, -0.5]);
    const behav = Float32Array.from([-1, -1, -2]); // ratios 1, e^-1, e^1.5 (> 2)
    const w = importanceWeights(prox, behav, 2, false, stats);
    expect([...w].map((x) => +x.toFixed(6))).toEqual([1, +Math.exp(-1).toFixed(6), 2]);
    expect(stats).toEqual({ tokens: 3, sum: w[0] + w[1] + w[2], max: 2, clipped: 1 });
  });

  it("at action level gives every token the sequence's ratio", () => {
    const stats = emptyImportance();
    const w = importanceWeights(Float32Array.from([-1, -1]), Float32Array.from([-1.2, -1.1]), 5, true, stats);
    const r = Math.exp(0.3);
    expect(w[0]).toBeCloseTo(r, 6);
    expect(w[1]).toBeCloseTo(r, 6);
    expect(stats.clipped).toBe(0);
  });
});
