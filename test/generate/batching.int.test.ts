// Continuous batching: a request gets the same tokens and log-probs, bit for bit, alone or in any
// mixed batch (different adapters, temperatures, cuts, lengths, stops, arrival times), prefix-shared
// and unshared runs agree, a small cache queues requests instead of failing, and the event loop
// keeps running.
import { beforeAll, describe, expect, it } from "vitest";
import { MasoError } from "../../src/errors.js";
import type { GenerationRequest, GenerationResult } from "../../src/engine/generate/request.js";
import { Sampler } from "../../src/engine/generate/sampler.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

const model = tinyModel("qwen3", 21, { numKvHeads: 2, numHeads: 4 });
addRandomAdapter(model, "planner", 1);
addRandomAdapter(model, "critic", 2, ["k_proj", "gate_proj", "up_proj"]);
const tokenizer = createByteTokenizer();
const enc = (s: string) => tokenizer.encode(s);

const mixed: GenerationRequest[] = [
  { promptTokens: enc("plan the route"), adapter: "planner", temperature: 0.8, seed: 1, maxNewTokens: 14 },
  { promptTokens: enc("critique"), adapter: "critic", temperature: 0, maxNewTokens: 9 },
  { promptTokens: enc("x"), temperature: 1.2, topK: 20, seed: 2, maxNewTokens: 17 },
  { promptTokens: enc("a much longer prompt that spans several cache blocks"), temperature: 1, topP: 0.8, seed: 3, maxNewTokens: 6 },
  { promptTokens: enc("plan the route"), adapter: "planner", temperature: 0.8, seed: 4, maxNewTokens: 12 },
  { promptTokens: enc("plan the route"), adapter: null, temperature: 0.5, topK: 5, topP: 0.9, seed: 5, maxNewTokens: 11 },
  { prompt: "stop me", temperature: 1, seed: 6, maxNewTokens: 30, stop: ["zz", "AA\n"], ignoreEos: true },
];

async function alone(req: GenerationRequest): Promise<GenerationResult> {
  return new Sampler(model, { tokenizer, blockSize: 4 }).submit(req);
}

const solo: GenerationResult[] = [];
beforeAll(async () => {
  for (const r of mixed) solo.push(await alone(r));
});

function expectAllSame(got: GenerationResult[], want: GenerationResult[]): void {
  expect(got).toHaveLength(want.length);
  for (let i = 0; i < got.length; i++) expectSame(got[i], want[i]);
}

function expectSame(a: GenerationResult, b: GenerationResult): void {
  expect(a.tokens).toEqual(b.tokens);
  expect(a.text).toEqual(b.text);
  expect(a.finishReason).toEqual(b.finishReason);
  // the same bits, not merely close: every product of a step is row-invariant (gemm_nt_rows at any
  // row count), so nothing a row computes depends on the batch or prefill it shares
  expect(a.logprobs).toEqual(b.logprobs);
  expect(a.sampledLogprobs).toEqual(b.sampledLogprobs);
}

describe("mixed batches", () => {
  it("each request gets exactly what it gets alone", async () => {
    const batch = await new Sampler(model, { tokenizer, blockSize: 4 }).generate(mixed);
    expectAllSame(batch, solo);
    // and the batch really was mixed: different lengths, both finish reasons, a stop string hit
    expect(new Set(batch.map((r) => r.tokens.length)).size).toBeGreaterThan(3);
    expect(new Set(batch.map((r) => r.finishReason))).toEqual(new Set(["stop", "length"]));
    expect(batch.some((r) => typeof r.stopReason === "string")).toBe(true);
  });

  it("requests arriving while others run join the batch and still match", async () => {
    const sampler = new Sampler(model, { tokenizer, blockSize: 4, maxBatch: 3 });
    const pending: Promise<GenerationResult>[] = [];
    for (const r of mixed) {
      pending.push(sampler.submit(r));
      for (let i = 0; i < 3; i++) await new Promise((res) => setImmediate(res)); // a few steps later
    }
    expectAllSame(await Promise.all(pending), solo);
    const stats = sampler.stats();
    expect(stats).toMatchObject({ active: 0, pending: 0 });
    expect(stats.cacheBlocksInUse).toBe(stats.prefixCacheBlocks); // only the prefix cache holds blocks
  });

  it("the event loop keeps turning while a long generation runs", async () => {
    const sampler = new Sampler(model, { tokenizer });
    let ticks = 0;
    let running = true;
    const tick = () => {
      ticks++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    await sampler.submit({ promptTokens: enc("go"), maxNewTokens: 40, ignoreEos: true, seed: 9 });
    running = false;
    expect(ticks).toBeGreaterThan(20);
  });

  it("a cache with room for two sequences queues the rest and finishes all", async () => {
    // 2 layers * 2 (K,V) * 4 positions * 32 floats * 4 bytes = 2 KiB per block; a 16-block budget
    const sampler = new Sampler(model, { tokenizer, blockSize: 4, cacheBytes: 16 * 2048 });
    expectAllSame(await sampler.generate(mixed), solo);
    await expect(sampler.submit({ promptTokens: enc("x"), maxNewTokens: 100 })).rejects.toMatchObject({ code: "KV_CACHE_TOO_SMALL" });
  });

  it("close() rejects queued and running requests", async () => {
    const sampler = new Sampler(model, { tokenizer, maxBatch: 1 });
    const a = sampler.submit({ promptTokens: enc("a"), maxNewTokens: 50, ignoreEos: true });
    const b = sampler.submit({ promptTokens: enc("b"), maxNewTokens: 50, ignoreEos: true });
    await new Promise((res) => setImmediate(res));
    sampler.close();
    await expect(a).rejects.toBeInstanceOf(MasoError);
    await expect(b).rejects.toMatchObject({ code: "SAMPLER_CLOSED" });
    await expect(sampler.submit({ promptTokens: enc("c") })).rejects.toMatchObject({ code: "SAMPLER_CLOSED" });
  });
});

describe("prefix sharing", () => {
  const group: GenerationRequest[] = Array.from({ length: 8 }, (_, i) => ({
    promptTokens: enc("a shared prompt of a GRPO group, 8 samples"),
    adapter: i % 2 ? "planner" : null,
    temperature: 1,
    seed: 100 + i,
    maxNewTokens: 10 + i,
  }));

  it("computes each prompt once and gives the same outputs as unshared runs", async () => {
    const shared = new Sampler(model, { tokenizer, blockSize: 4 });
    const unshared = new Sampler(model, { tokenizer, blockSize: 4, prefixSharing: false });
    const a = await shared.generate(group);
    const b = await unshared.generate(group);
    expectAllSame(a, b);
    const P = group[0].promptTokens!.length;
    expect(shared.stats().prefillTokens).toBe(2 * P); // one prefill per (prompt, adapter)
    expect(shared.stats().sharedPromptTokens).toBe(6 * P);
    expect(unshared.stats().prefillTokens).toBe(8 * P);
    expect(shared.stats().cacheBlocksInUse).toBe(shared.stats().prefixCacheBlocks);
    expect(unshared.stats()).toMatchObject({ cacheBlocksInUse: 0, prefixCacheBlocks: 0 });
    expect(new Set(a.map((r) => r.tokens.join())).size).toBe(8); // different seeds, different samples
  });

  it("a request arriving while its prompt is live shares it; after weightsChanged() it does not", async () => {
    const sampler = new Sampler(model, { tokenizer, blockSize: 4 });
    const first = sampler.submit({ ...group[0], maxNewTokens: 30 });
    await new Promise((res) => setImmediate(res));
    await new Promise((res) => setImmediate(res));
    const second = await sampler.submit(group[2]);
    expectSame(second, await alone(group[2]));
    expect(sampler.stats().sharedPromptTokens).toBe(group[0].promptTokens!.length);
    sampler.weightsChanged();
    await sampler.submit(group[4]);
    expect(sampler.stats().sharedPromptTokens).toBe(group[0].promptTokens!.length);
    await first;
  });
});

describe("adapters removed mid-run", () => {
  it("fail only the requests that use them", async () => {
    const m = tinyModel("qwen2", 31);
    addRandomAdapter(m, "gone", 4);
    const sampler = new Sampler(m, { tokenizer });
    const keep = sampler.submit({ promptTokens: enc("keep"), maxNewTokens: 20, ignoreEos: true, seed: 1 });
    const lost = sampler.submit({ promptTokens: enc("lost"), adapter: "gone", maxNewTokens: 20, ignoreEos: true, seed: 1 });
    await new Promise((res) => setImmediate(res));
    await new Promise((res) => setImmediate(res));
    m.adapters.delete("gone");
    await expect(lost).rejects.toMatchObject({ code: "ADAPTER_UNKNOWN" });
    expect((await keep).tokens).toHaveLength(20);
  });
});
