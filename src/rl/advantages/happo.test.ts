// HAPPO factor: action log-ratios from token log-probs, accumulation over agents already updated, and
// the advantages the next agent sees. Expected numbers are written out.

import { describe, expect, it } from "vitest";
import { accumulateHappoFactors, actionLogRatios, applyHappoFactors, sampleHappoFactors } from "./happo.js";
import type { SampleMeta } from "./types.js";

const m = (episode: string, role: string, turn = 0): SampleMeta => ({ episode, role, model: "m", group: "t", turn, reward: 0 });

describe("HAPPO factors", () => {
  // Reasoner (updated first): episode e1 has tokens new [−1, −2], old [−1.2, −2.1] → log-ratio 0.3;
  // episode e2 has one token new −0.5, old −0.4 → −0.1. A prompt token (mask 0) is ignored.
  const reasoner = [m("e1", "reasoner"), m("e2", "reasoner")];
  const rLayout = { offsets: [0, 3, 4], mask: [0, 1, 1, 1] };
  const logRatios = actionLogRatios(rLayout, [7, -1, -2, -0.5], [3, -1.2, -2.1, -0.4]);

  it("sums token log-ratios per action", () => {
    expect(logRatios[0]).toBeCloseTo(0.3, 12);
    expect(logRatios[1]).toBeCloseTo(-0.1, 12);
  });

  it("multiplies the next agent's advantages by exp(Σ log-ratios)", () => {
    const f = accumulateHappoFactors(new Map(), reasoner, logRatios);
    expect(f.get("e1")).toBeCloseTo(1.3498588075760032, 12);
    expect(f.get("e2")).toBeCloseTo(0.9048374180359595, 12);
    const actor = [m("e1", "actor"), m("e2", "actor"), m("e3", "actor")];
    const adv = applyHappoFactors([1, 2, -1, 0.5], { offsets: [0, 2, 3, 4], mask: [1, 1, 1, 1] }, actor, f);
    // e3 has no factor yet → 1
    [1.3498588075760032, 2 * 1.3498588075760032, -0.9048374180359595, 0.5].forEach((e, i) => {
      expect(adv[i]).toBeCloseTo(e, 6);
    });
  });

  it("accumulates the product over several updated agents without touching the previous map", () => {
    const f1 = accumulateHappoFactors(new Map(), reasoner, logRatios);
    const f2 = accumulateHappoFactors(f1, [m("e1", "critic"), m("e1", "critic")], [0.2, -0.05]);
    // e1: exp(0.3)·exp(0.2 − 0.05) = exp(0.45)
    expect(f2.get("e1")).toBeCloseTo(1.568312185490169, 12);
    expect(f1.get("e1")).toBeCloseTo(1.3498588075760032, 12);
    expect(f2.get("e2")).toBe(f1.get("e2"));
  });

  it("can key by episode and turn, and clip", () => {
    const f = accumulateHappoFactors(new Map(), [m("e", "r", 0), m("e", "r", 1)], [1, -1], { by: "episode-turn", clip: [0.5, 2] });
    expect([...sampleHappoFactors([m("e", "a", 0), m("e", "a", 1), m("e", "a", 2)], f, "episode-turn")]).toEqual([2, 0.5, 1]);
  });

  it("rejects mismatched lengths", () => {
    expect(() => accumulateHappoFactors(new Map(), reasoner, [0.1])).toThrow(/logRatios/);
  });
});
