// The Sampler's top log-probs on a real (tiny) model: at every generated position the alternatives
// are the brute-force top-n of log softmax(z / T) over the training forward's logits row, below the
// tokenizer's vocabulary; the sampled token's own entry is its reported log-prob; and a request that
// does not ask gets exactly what it got before, alone or batched with one that does.
import { describe, expect, it } from "vitest";
import { addRandomAdapter, tinyModel } from "../../../test/generate/tiny-models.js";
import { native } from "../../native/binding.js";
import type { Decoder } from "../model/decoder.js";
import { createByteTokenizer } from "../tokenizer/byte-tokenizer.js";
import type { GenerationRequest, GenerationResult } from "./request.js";
import { Sampler } from "./sampler.js";

const tokenizer = createByteTokenizer(); // 264 ids below the model's 300: the rest are never alternatives
const allowed = tokenizer.vocabSize;
const prompt = [5, 17, 42, 99, 3, 250, 7, 8, 9, 10, 11];
const TOL = 1e-4; // the sampler's batched step and the training forward differ by float rounding

/** The training forward's logits row before each generated token (tokens × V). */
function forwardRows(model: Decoder, r: GenerationResult): Float32Array {
  const tokens = [...r.promptTokens, ...r.tokens];
  const P = r.promptTokens.length;
  const f = model.forward([{ tokens, adapter: r.adapter, scoreMask: tokens.map((_, i) => (i >= P ? 1 : 0)) }], { hidden: true });
  const { vocabSize: V, hiddenSize: C } = model.config;
  const rows = new Float32Array(r.tokens.length * V);
  native().matmulForward(rows, f.hidden!, model.head(), null, r.tokens.length, C, V, false);
  return rows;
}

/** log softmax(z / T) over the whole row, in float64. */
function logSoftmax(z: Float32Array, T: number): number[] {
  const s = Array.from(z, (x) => x / T);
  const mx = Math.max(...s);
  const lse = mx + Math.log(s.reduce((a, x) => a + Math.exp(x - mx), 0));
  return s.map((x) => x - lse);
}

/** Checks every position's alternatives against the brute-force log-softmax of its forward row. */
function expectBruteForce(model: Decoder, r: GenerationResult, n: number): void {
  const V = model.config.vocabSize;
  const rows = forwardRows(model, r);
  expect(r.topLogprobs).toHaveLength(r.tokens.length);
  r.topLogprobs!.forEach((top, t) => {
    const lp = logSoftmax(rows.subarray(t * V, (t + 1) * V), r.temperature);
    const best = lp
      .slice(0, allowed)
      .map((logprob, token) => ({ token, logprob }))
      .sort((a, b) => b.logprob - a.logprob || a.token - b.token);
    expect(top).toHaveLength(n);
    for (let i = 0; i < n; i++) {
      expect(top[i].token).toBeLessThan(allowed);
      expect(Math.abs(top[i].logprob - lp[top[i].token])).toBeLessThan(TOL);
      // the i-th listed is the i-th best up to rounding (no near-tie can flip the test)
      expect(Math.abs(top[i].logprob - best[i].logprob)).toBeLessThan(TOL);
      if (i > 0) expect(top[i].logprob).toBeLessThanOrEqual(top[i - 1].logprob);
    }
    const own = top.find((a) => a.token === r.tokens[t]);
    if (own) expect(own.logprob).toBe(r.logprobs[t]);
    else expect(r.logprobs[t]).toBeLessThanOrEqual(top[n - 1].logprob);
  });
}

describe("Sampler topLogprobs", () => {
  const model = tinyModel("qwen2", 3);
  addRandomAdapter(model, "lora", 11);
  const sampled: GenerationRequest = { promptTokens: prompt, temperature: 0.8, seed: 5, maxNewTokens: 12, ignoreEos: true };
  const greedy: GenerationRequest = { promptTokens: prompt, adapter: "lora", temperature: 0, maxNewTokens: 12, ignoreEos: true };

  it("returns the brute-force top-n of the tempered log-softmax at every position", async () => {
    const sampler = new Sampler(model, { tokenizer, blockSize: 4 });
    const [a, b] = await sampler.generate([
      { ...sampled, topLogprobs: 5 },
      { ...greedy, topLogprobs: 3 },
    ]);
    expectBruteForce(model, a, 5);
    expectBruteForce(model, b, 3);
    // greedy: the chosen token is the first alternative, with its own log-prob (T = 1)
    b.topLogprobs!.forEach((top, t) => {
      expect(top[0]).toEqual({ token: b.tokens[t], logprob: b.logprobs[t] });
    });
  });

  it("leaves results that do not ask unchanged, alone or batched with one that does", async () => {
    const plain = await new Sampler(model, { tokenizer }).generate([sampled, greedy]);
    const mixed = await new Sampler(model, { tokenizer }).generate([
      sampled,
      { ...greedy, topLogprobs: 20 },
      { ...sampled, topLogprobs: 2 },
    ]);
    expect(plain.every((r) => !("topLogprobs" in r))).toBe(true);
    expect(mixed[0]).toEqual(plain[0]);
    const { topLogprobs: top20, ...withoutTop } = mixed[1];
    expect(withoutTop).toEqual(plain[1]);
    expect(top20!.every((top) => top.length === 20)).toBe(true);
    const { topLogprobs: _, ...sameDraws } = mixed[2];
    expect(sameDraws).toEqual(plain[0]);
  });

  it("rejects a topLogprobs outside 0–20", async () => {
    const sampler = new Sampler(model, { tokenizer });
    await expect(sampler.submit({ ...sampled, topLogprobs: 21 })).rejects.toMatchObject({ code: "GENERATE_REQUEST" });
    await expect(sampler.submit({ ...sampled, topLogprobs: 1.5 })).rejects.toMatchObject({ code: "GENERATE_REQUEST" });
  });
});
