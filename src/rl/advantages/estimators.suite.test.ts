// The shared suite every registered advantage estimator runs: shapes, masked tokens get 0, finite and
// deterministic outputs, loud failures on bad input. Per-estimator numbers live in their own tests.

import { describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import { estimators } from "./registry.js";
import type { AdvantageInput, Estimator, SampleMeta } from "./types.js";

function meta(episode: string, role: string, task: string, reward: number, value: number, turn = 0): SampleMeta {
  return { episode, role, model: "m0", group: task, turn, reward, value };
}

// Two dual-agent episodes on task a (groups of 2 per role) and one single-agent episode on task b
// (a group of 1). Each sequence: prompt tokens (mask 0), response tokens, padding (mask 0).
function fixture(): AdvantageInput {
  const samples = [
    meta("e1", "reasoner", "a", 0, 0.2),
    meta("e1", "actor", "a", 1, 0.5),
    meta("e2", "reasoner", "a", 0, 0.1),
    meta("e2", "actor", "a", 0, 0.4),
    meta("e3", "solo", "b", 0.5, 0.3),
  ];
  const offsets = [0, 4, 8, 11, 15, 18];
  const mask = [0, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1];
  const n = offsets[offsets.length - 1];
  const values = Array.from({ length: n }, (_, t) => 0.1 * ((t * 7) % 5));
  const tokenRewards = Array.from({ length: n }, (_, t) => (t % 6 === 2 ? 0.1 : 0));
  return { samples, offsets, mask, values, tokenRewards };
}

const cases: [string, Estimator][] = Object.entries(estimators);

describe.each(cases)("estimator %s (shared suite)", (name, est) => {
  it("is registered under its own name", () => {
    expect(est.name).toBe(name);
  });

  it("returns per-token arrays of the right length, with 0 on masked tokens", () => {
    const input = fixture();
    const out = est.estimate(input);
    const n = input.offsets[input.offsets.length - 1];
    expect(out.advantages).toBeInstanceOf(Float32Array);
    expect(out.advantages.length).toBe(n);
    expect(out.returns.length).toBe(n);
    for (let t = 0; t < n; t++) {
      if (input.mask[t] === 0) {
        expect(out.advantages[t]).toBe(0);
        expect(out.returns[t]).toBe(0);
      }
    }
    if (out.sampleAdvantages) {
      expect(out.sampleAdvantages.length).toBe(input.samples.length);
      for (let s = 0; s < input.samples.length; s++) {
        for (let t = input.offsets[s]; t < input.offsets[s + 1]; t++) {
          if (input.mask[t] === 1) expect(out.advantages[t]).toBeCloseTo(out.sampleAdvantages[s], 6);
        }
      }
    }
  });

  it("gives finite outputs and metrics, also for a group of one", () => {
    const out = est.estimate(fixture());
    for (const x of [...out.advantages, ...out.returns]) expect(Number.isFinite(x)).toBe(true);
    for (const [k, v] of Object.entries(out.metrics)) expect(Number.isFinite(v), k).toBe(true);
  });

  it("is deterministic and does not modify its input", () => {
    const input = fixture();
    const before = JSON.stringify(input);
    const a = est.estimate(input);
    const b = est.estimate(fixture());
    expect(JSON.stringify(input)).toBe(before);
    expect([...a.advantages]).toEqual([...b.advantages]);
    expect([...a.returns]).toEqual([...b.returns]);
    expect(a.metrics).toEqual(b.metrics);
  });

  it("handles an empty batch", () => {
    const out = est.estimate({ samples: [], offsets: [0], mask: [], values: [] });
    expect(out.advantages.length).toBe(0);
  });

  it("rejects a mask that does not match the offsets", () => {
    const input = fixture();
    expect(() => est.estimate({ ...input, mask: Array.from(input.mask).slice(1) })).toThrow(MasoError);
  });

  it("rejects a non-finite reward with a MasoError naming the sample", () => {
    const input = fixture();
    const samples = input.samples.map((m, s) => (s === 1 ? { ...m, reward: Number.NaN } : m));
    expect(() => est.estimate({ ...input, samples })).toThrow(/samples\[1\]\.reward/);
  });

  it("rejects a sample count that does not match the offsets", () => {
    const input = fixture();
    expect(() => est.estimate({ ...input, samples: input.samples.slice(1) })).toThrow(MasoError);
  });
});
