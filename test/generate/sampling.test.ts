// Sampling maths on hand-made logits: greedy ties, top-k and top-p cuts as HF defines them (also
// the bisection path used on large vocabularies), draw frequencies, and both reported log-probs.
import { describe, expect, it } from "vitest";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { sampleToken, samplingSupport } from "../../src/engine/generate/sampling.js";

const logits = (p: number[]) => Float32Array.from(p.map(Math.log));
const probs = [0.5, 0.3, 0.15, 0.05];

describe("sampleToken", () => {
  it("greedy takes the first maximum and reports the T=1 log-prob", () => {
    const z = Float32Array.from([1, 3, 3, 2]);
    const r = sampleToken(z, 4, { temperature: 0, topK: 0, topP: 1 }, createRng(1));
    const lse = Math.log([1, 3, 3, 2].reduce((s, x) => s + Math.exp(x), 0));
    expect(r).toEqual({ token: 1, logprob: expect.closeTo(3 - lse, 6), sampledLogprob: 0 });
  });

  it("draws match the tempered distribution", () => {
    const z = logits(probs);
    const rng = createRng(5);
    const counts = [0, 0, 0, 0];
    const n = 20000;
    const T = 2;
    const tempered = probs.map((p) => p ** (1 / T));
    const norm = tempered.reduce((a, b) => a + b);
    for (let i = 0; i < n; i++) {
      const r = sampleToken(z, 4, { temperature: T, topK: 0, topP: 1 }, rng);
      counts[r.token]++;
      if (i < 100) expect(r.logprob).toBeCloseTo(Math.log(tempered[r.token] / norm), 5);
    }
    for (let j = 0; j < 4; j++) expect(Math.abs(counts[j] / n - tempered[j] / norm)).toBeLessThan(0.015);
  });

  it("top-p keeps the smallest most-likely set reaching p (HF's rule) and renormalises", () => {
    const z = logits(probs);
    expect(Array.from(samplingSupport(z, 4, { temperature: 1, topK: 0, topP: 0.7 }))).toEqual([0, 1]);
    expect(Array.from(samplingSupport(z, 4, { temperature: 1, topK: 0, topP: 0.5 }))).toEqual([0]);
    expect(Array.from(samplingSupport(z, 4, { temperature: 1, topK: 0, topP: 0.81 }))).toEqual([0, 1, 2]);
    const rng = createRng(2);
    for (let i = 0; i < 200; i++) {
      const r = sampleToken(z, 4, { temperature: 1, topK: 0, topP: 0.7 }, rng);
      expect(r.token).toBeLessThan(2);
      expect(r.sampledLogprob).toBeCloseTo(Math.log(probs[r.token] / 0.8), 5);
      expect(r.logprob).toBeCloseTo(Math.log(probs[r.token]), 5);
    }
  });

  it("top-k keeps k ids, lower ids first among ties; the mask comes first", () => {
    const z = Float32Array.from([1, 3, 3, 2, 9]);
    expect(Array.from(samplingSupport(z, 5, { temperature: 1, topK: 2, topP: 1 }))).toEqual([1, 4]);
    expect(Array.from(samplingSupport(z, 4, { temperature: 1, topK: 2, topP: 1 }))).toEqual([1, 2]);
    expect(Array.from(samplingSupport(z, 4, { temperature: 1, topK: 1, topP: 1 }))).toEqual([1]);
    expect(Array.from(samplingSupport(z, 4, { temperature: 1, topK: 10, topP: 1 }))).toEqual([0, 1, 2, 3]);
  });

  it("the bisection shortcut on big vocabularies gives the same nucleus as a full sort", () => {
    const rng = createRng(9);
    for (const [V, T, topP, topK] of [
      [5000, 1, 0.9, 0],
      [50000, 0.7, 0.95, 0],
      [50000, 1.3, 0.3, 4000],
    ]) {
      const z = new Float32Array(V);
      fillNormal(z, rng, 3);
      const got = Array.from(samplingSupport(z, V, { temperature: T, topK, topP }));
      // reference: sort every id by logit, apply top-k then HF's cumulative rule
      let order = Array.from({ length: V }, (_, i) => i).sort((a, b) => z[b] - z[a] || a - b);
      if (topK) order = order.slice(0, topK);
      const w = order.map((i) => Math.exp((z[i] - z[order[0]]) / T));
      const total = w.reduce((a, b) => a + b);
      const want: number[] = [];
      let before = 0;
      for (let i = 0; i < order.length && (want.length === 0 || before < topP * total); i++) {
        want.push(order[i]);
        before += w[i];
      }
      expect(got).toEqual(want.sort((a, b) => a - b));
    }
  });
});
