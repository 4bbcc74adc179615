// In bf16 a request gets the same bits whatever it was batched with: the same tokens and the same
// log-probs, exactly, alone or in a mixed batch, and for a conversation's next turn whether its
// prefix came from the cache (computed while decoding) or was prefilled afresh. bf16 rounds every
// product's operands, so a last-bit difference between two ways of computing one row changes the
// next product's inputs and, a few tokens later, the sampled text: rollouts would then depend on
// which sequences happened to run together.
import { describe, expect, it } from "vitest";
import type { GenerationRequest, GenerationResult } from "../../src/engine/generate/request.js";
import { Sampler } from "../../src/engine/generate/sampler.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { native } from "../../src/native/binding.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

const bf16 = native().bf16();
const tokenizer = createByteTokenizer();
const enc = (s: string) => tokenizer.encode(s);
const BS = 4;

// hidden 64 / ffn 96 / heads of 16: K a multiple of 32 in most products, and not in the LoRA ones
const model = tinyModel("qwen3", 31, { numKvHeads: 2, numHeads: 4 });
addRandomAdapter(model, "coder", 5, ["q_proj", "v_proj", "up_proj"]);
model.precision = "bf16";

// 20 requests: decode steps of up to 20 rows against 1 alone (general bf16 GEMMs sum 16+ rows in
// another order than one row at these shapes)
const requests: GenerationRequest[] = Array.from({ length: 20 }, (_, i) => ({
  promptTokens: enc(["write a function", "x", "a longer prompt that spans several cache blocks of four", "fix the bug"][i % 4]),
  adapter: i % 3 === 0 ? "coder" : null,
  temperature: 0.8 + 0.1 * (i % 4),
  seed: i + 1,
  maxNewTokens: 12 + ((i * 5) % 19),
  ignoreEos: true,
}));

const fresh = (req: GenerationRequest) => new Sampler(model, { tokenizer, blockSize: BS }).submit(req);

function expectIdentical(a: GenerationResult, b: GenerationResult): void {
  expect(a.tokens).toEqual(b.tokens);
  expect(a.logprobs).toEqual(b.logprobs);
}

describe.skipIf(!bf16.onednn || bf16.rowKernel === "none")("bf16 generation is batch-invariant", () => {
  it("a request's tokens and log-probs are bit-identical alone and in a mixed batch", async () => {
    const solo: GenerationResult[] = [];
    for (const r of requests) solo.push(await fresh(r));
    const batch = await new Sampler(model, { tokenizer, blockSize: BS }).generate(requests);
    for (let i = 0; i < requests.length; i++) expectIdentical(batch[i], solo[i]);
    // staggered: each request joins while the others decode
    const sampler = new Sampler(model, { tokenizer, blockSize: BS });
    const late = await Promise.all(
      requests.map(async (r, i) => {
        for (let t = 0; t < i; t++) await new Promise((res) => setImmediate(res));
        return sampler.submit(r);
      }),
    );
    for (let i = 0; i < requests.length; i++) expectIdentical(late[i], solo[i]);
  });

  it("a next turn is bit-identical with its prefix cached (decoded) or prefilled afresh", async () => {
    for (const adapter of [null, "coder"]) {
      const first: GenerationRequest = {
        promptTokens: enc("user: add two numbers"),
        adapter,
        temperature: 1,
        seed: 7,
        maxNewTokens: 19,
        ignoreEos: true,
      };
      const sampler = new Sampler(model, { tokenizer, blockSize: BS });
      const answer = await sampler.submit(first);
      const second: GenerationRequest = {
        promptTokens: [...(first.promptTokens ?? []), ...answer.tokens, ...enc(" tests failed")],
        adapter,
        temperature: 1,
        seed: 8,
        maxNewTokens: 23,
        ignoreEos: true,
      };
      const before = sampler.stats().cachedPromptTokens;
      const warm = await sampler.submit(second);
      expect(sampler.stats().cachedPromptTokens).toBeGreaterThan(before); // the prefix really came from the cache
      expectIdentical(warm, await fresh(second));
    }
  });
});
