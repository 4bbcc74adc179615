// topLogprobs on hand-made rows: the alternatives are the brute-force top-n of log softmax(z / T)
// over the full vocabulary, restricted to allowed ids, ties lower id first, and the sampled token's
// own entry is its log-prob exactly.
import { describe, expect, it } from "vitest";
import { createRng } from "../../rng.js";
import { sampleToken } from "./sampling.js";
import { topLogprobs } from "./top-logprobs.js";

/** log softmax(z / T) over every id, in float64, and the `n` best allowed ids by a full sort. */
function bruteForce(z: Float32Array, allowed: number, n: number, temperature: number) {
  const T = temperature === 0 ? 1 : temperature;
  const s = Array.from(z, (x) => x / T);
  const mx = Math.max(...s);
  const lse = mx + Math.log(s.reduce((a, x) => a + Math.exp(x - mx), 0));
  const ids = Array.from({ length: Math.min(allowed, z.length) }, (_, i) => i).sort((i, j) => z[j] - z[i] || i - j);
  return ids.slice(0, n).map((token) => ({ token, logprob: s[token] - lse }));
}

function randomRow(V: number, seed: number): Float32Array {
  const rng = createRng(seed);
  return Float32Array.from({ length: V }, () => 8 * (rng.next() - 0.5));
}

describe("topLogprobs", () => {
  it.each([
    [0, 5],
    [0.7, 20],
    [1.3, 1],
  ])("equals the brute-force top-n of the log-softmax (T = %s, n = %s)", (temperature, n) => {
    const z = randomRow(5000, 3);
    const allowed = 4000;
    z[4500] = 50; // above every allowed id: in the normaliser, never an alternative
    const sampled = sampleToken(z, allowed, { temperature, topK: 0, topP: 1 }, createRng(9));
    const top = topLogprobs(z, allowed, n, temperature, sampled);
    const ref = bruteForce(z, allowed, n, temperature);
    expect(top.map((a) => a.token)).toEqual(ref.map((a) => a.token));
    top.forEach((a, i) => {
      expect(a.logprob).toBeCloseTo(ref[i].logprob, 5);
    });
    const own = top.find((a) => a.token === sampled.token);
    if (own) expect(own.logprob).toBe(sampled.logprob);
  });

  it("puts the lower id first among equal logits and stops at the allowed ids", () => {
    const z = Float32Array.from([1, 4, 2, 4, 3, 4, 9]);
    const sampled = sampleToken(z, 6, { temperature: 0, topK: 0, topP: 1 }, createRng(1));
    expect(sampled.token).toBe(1);
    const top = topLogprobs(z, 6, 4, 0, sampled);
    expect(top.map((a) => a.token)).toEqual([1, 3, 5, 4]);
    expect(top[0].logprob).toBe(sampled.logprob);
    expect(top[1].logprob).toBeCloseTo(sampled.logprob, 6);
    expect(topLogprobs(z, 6, 20, 0, sampled)).toHaveLength(6);
    expect(topLogprobs(z, 6, 0, 0, sampled)).toEqual([]);
  });
});
