// The prefix cache: a prompt that starts with blocks an earlier request computed (the next turn of
// a conversation) prefills only the rest and gets what a fresh sampler gives it; nothing is reused
// across adapters or after weightsChanged(); a small cache evicts idle blocks instead of refusing.
import { describe, expect, it } from "vitest";
import type { GenerationRequest, GenerationResult } from "../../src/engine/generate/request.js";
import { Sampler } from "../../src/engine/generate/sampler.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { worst } from "./check-forward.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

const model = tinyModel("qwen3", 23, { numKvHeads: 2, numHeads: 4 });
addRandomAdapter(model, "coder", 3, ["k_proj", "v_proj", "up_proj"]);
const tokenizer = createByteTokenizer();
const enc = (s: string) => tokenizer.encode(s);
const BS = 4;

const fresh = (req: GenerationRequest) => new Sampler(model, { tokenizer, blockSize: BS }).submit(req);

function expectSame(a: GenerationResult, b: GenerationResult): void {
  expect(a.tokens).toEqual(b.tokens);
  expect(worst(a.logprobs, b.logprobs)).toBeLessThan(1e-4);
}

/** The next turn: the first prompt, what the model answered, and a reply. */
const nextTurn = (first: number[], answer: GenerationResult, reply: string): number[] => [...first, ...answer.tokens, ...enc(reply)];

describe("prefix cache", () => {
  const first = enc("system: you write code. user: add two numbers");
  const turn = (adapter: string | null, seed: number): GenerationRequest => ({
    promptTokens: first,
    adapter,
    temperature: 1,
    seed,
    maxNewTokens: 13,
    ignoreEos: true,
  });

  it("the next turn prefills only its new tokens and matches a fresh sampler", async () => {
    for (const adapter of [null, "coder"]) {
      const sampler = new Sampler(model, { tokenizer, blockSize: BS });
      const answer = await sampler.submit(turn(adapter, 1));
      const before = sampler.stats();
      const prompt = nextTurn(first, answer, " tests failed: try again");
      const second: GenerationRequest = { promptTokens: prompt, adapter, temperature: 1, seed: 2, maxNewTokens: 9, ignoreEos: true };
      const got = await sampler.submit(second);
      expectSame(got, await fresh(second));
      const after = sampler.stats();
      // every whole block of the first turn, prompt and answer alike, except the one holding the last prompt position
      const reusable = Math.floor((first.length + answer.tokens.length - 1) / BS) * BS;
      expect(after.cachedPromptTokens - before.cachedPromptTokens).toBe(reusable);
      expect(after.prefillTokens - before.prefillTokens).toBe(prompt.length - reusable);
    }
  });

  it("reuses nothing across adapters or after weightsChanged()", async () => {
    const sampler = new Sampler(model, { tokenizer, blockSize: BS });
    const answer = await sampler.submit(turn(null, 1));
    const prompt = nextTurn(first, answer, " again");
    const other: GenerationRequest = { promptTokens: prompt, adapter: "coder", temperature: 1, seed: 3, maxNewTokens: 5 };
    expectSame(await sampler.submit(other), await fresh(other));
    expect(sampler.stats().cachedPromptTokens).toBe(0);
    sampler.weightsChanged();
    expect(sampler.stats().prefixCacheBlocks).toBe(0);
    await sampler.submit({ ...other, adapter: null });
    expect(sampler.stats()).toMatchObject({ cachedPromptTokens: 0, cacheBlocksInUse: sampler.stats().prefixCacheBlocks });
  });

  it("a full cache evicts blocks no request reads and serves every request", async () => {
    const bytesPerBlock = 2 * model.config.numLayers * BS * model.config.numKvHeads * model.config.headDim * 4;
    const sampler = new Sampler(model, { tokenizer, blockSize: BS, cacheBytes: 24 * bytesPerBlock });
    const reqs = Array.from({ length: 12 }, (_, i) => ({
      prompt: `request number ${i} with its own words`,
      seed: i,
      maxNewTokens: 20,
      ignoreEos: true,
    }));
    for (const r of reqs) expectSame(await sampler.submit(r), await fresh(r));
    const s = sampler.stats();
    expect(s.prefixCacheBlocks).toBeLessThanOrEqual(16); // its limit: a quarter of the budget, at least 16
    expect(s.cacheBlocksInUse).toBe(s.prefixCacheBlocks);
    // concurrent requests that need the whole budget still all run
    const batch = await sampler.generate(reqs.slice(0, 3));
    for (let i = 0; i < 3; i++) expectSame(batch[i], await fresh(reqs[i]));
  });
});
