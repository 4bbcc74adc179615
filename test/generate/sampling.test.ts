// Sampling maths on hand-made logits: greedy ties, top-k and top-p cuts as HF defines them (also
// the bisection path used on large vocabularies), draw frequencies, and both reported log-probs.
import { describe, expect, it } from "vitest";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { sampleRows, sampleToken, samplingSupport } from "../../src/engine/generate/sampling.js";

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

  it("a batch of rows draws what each row draws alone, with float64-exact normalisers and pick", () => {
    const V = 4096;
    const settings = [
      { temperature: 0, topK: 0, topP: 1 },
      { temperature: 0.3, topK: 0, topP: 1 },
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.7, topK: 40, topP: 0.9 },
      { temperature: 1.5, topK: 0, topP: 1 },
    ];
    const z = new Float32Array(settings.length * V);
    fillNormal(z, createRng(4), 4);
    for (const allowed of [V, 3000]) {
      const batch = sampleRows(
        z,
        V,
        allowed,
        settings.map((p, r) => ({ sampling: p, rng: createRng(r) })),
      );
      settings.forEach((p, r) => {
        const row = z.subarray(r * V, (r + 1) * V);
        expect(sampleToken(row, allowed, p, createRng(r))).toEqual(batch[r]);
        // float64 reference: normaliser over the whole vocabulary, draw over ids below `allowed`
        const inv = p.temperature === 0 ? 1 : Math.fround(1 / p.temperature);
        let mx = Number.NEGATIVE_INFINITY;
        for (const x of row) mx = Math.max(mx, x);
        let sum = 0;
        for (const x of row) sum += Math.exp((x - mx) * inv);
        const lse = mx * inv + Math.log(sum);
        const got = batch[r];
        expect(got.token).toBeLessThan(allowed);
        expect(Math.abs(got.logprob - (row[got.token] * inv - lse))).toBeLessThan(1e-5);
        if (p.temperature === 0) {
          let best = 0;
          for (let j = 1; j < allowed; j++) if (row[j] > row[best]) best = j;
          expect(got.token).toBe(best);
        } else if (p.topP === 1 && p.topK === 0) {
          let mxk = Number.NEGATIVE_INFINITY;
          for (let j = 0; j < allowed; j++) mxk = Math.max(mxk, row[j]);
          const w = Array.from(row.subarray(0, allowed), (x) => Math.exp((x - mxk) * inv));
          const mass = w.reduce((a, b) => a + b);
          const u = createRng(r).next() * mass;
          let acc = 0;
          let pick = allowed - 1;
          for (let j = 0; j < allowed; j++)
            if (u < (acc += w[j])) {
              pick = j;
              break;
            }
          expect(got.token).toBe(pick);
          expect(Math.abs(got.sampledLogprob - Math.log(w[pick] / mass))).toBeLessThan(1e-5);
        }
      });
    }
  });

  it("the native exp stays within 2e-7 relative of Math.exp over the softmax range", () => {
    const xs = Array.from({ length: 20000 }, (_, i) => -87 + (87 * i) / 20000); // below 0: id 1 wins
    // one row per x: a two-logit row [x, 0] at T=1 normalises to lse = log(1 + e^x)
    const z = new Float32Array(xs.length * 2);
    xs.forEach((x, i) => {
      z[2 * i] = x;
    });
    const rows = xs.map(() => ({ sampling: { temperature: 0, topK: 0, topP: 1 }, rng: createRng(0) }));
    const got = sampleRows(z, 2, 2, rows);
    xs.forEach((x, i) => {
      const e = Math.exp(Math.fround(x));
      // greedy picks id 1 (logit 0); its log-prob is -log(1 + e^x)
      expect(got[i].token).toBe(1);
      const want = -Math.log1p(e);
      expect(Math.abs(got[i].logprob - want)).toBeLessThanOrEqual(2e-7 * Math.max(1e-30, Math.abs(want)) + 1e-12);
    });
  });
});
