// Request handling around the model: stop strings (also split across tokens, text cut before them),
// stop token ids, the tokenizer-vocabulary mask, chat and plain prompts, seeds, the context limit,
// and bad request fields, each rejected with a MasoError naming the field.
import { describe, expect, it } from "vitest";
import { MasoError } from "../../src/errors.js";
import type { GenerationRequest } from "../../src/engine/generate/request.js";
import { Sampler } from "../../src/engine/generate/sampler.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { encodeChat } from "../../src/engine/tokenizer/encode-chat.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

const model = tinyModel("llama", 8);
addRandomAdapter(model, "solver", 3);
const tokenizer = createByteTokenizer(); // 264 ids; the model has 300
const sampler = new Sampler(model, { tokenizer });
const base: GenerationRequest = { prompt: "Question: 2+2?", temperature: 0, maxNewTokens: 40, ignoreEos: true };

describe("stops", () => {
  it("a stop string ends generation and the text stops before it", async () => {
    const full = await sampler.submit(base);
    const at = [...full.text].findIndex((ch, i, a) => i > 0 && ch !== "\uFFFD" && a[i + 1] !== undefined && a[i + 1] !== "\uFFFD");
    const stop = full.text.slice(at, at + 2);
    expect(stop).toHaveLength(2); // two byte tokens: the stop string spans a token boundary
    const r = await sampler.submit({ ...base, stop: ["never appears", stop] });
    expect(r.finishReason).toBe("stop");
    expect(r.stopReason).toBe(stop);
    expect(r.text).toBe(full.text.slice(0, full.text.indexOf(stop)));
    expect(r.tokens).toEqual(full.tokens.slice(0, r.tokens.length));
    expect(tokenizer.decode(r.tokens)).toContain(stop);
    expect(tokenizer.decode(r.tokens.slice(0, -1))).not.toContain(stop);
  });

  it("a multi-byte character split over two tokens is caught as a stop string", async () => {
    let found: { req: GenerationRequest; ch: string } | undefined;
    for (let seed = 0; seed < 40 && !found; seed++) {
      const req = { ...base, temperature: 1, seed };
      const ch = [...(await sampler.submit(req)).text].find((c) => c >= "\u0080" && c <= "\u07ff");
      if (ch) found = { req, ch };
    }
    expect(found).toBeDefined();
    const r = await sampler.submit({ ...found!.req, stop: [found!.ch] });
    expect(r.stopReason).toBe(found!.ch);
    expect(r.text).not.toContain(found!.ch);
    const last2 = r.tokens.slice(-2);
    expect(Buffer.from(last2).toString("utf8")).toBe(found!.ch);
  });

  it("a stop token id ends generation; the id is returned but not decoded into the text", async () => {
    const full = await sampler.submit(base);
    const id = full.tokens[5];
    const j = full.tokens.indexOf(id);
    const r = await sampler.submit({ ...base, stopTokenIds: [id] });
    expect(r.tokens).toEqual(full.tokens.slice(0, j + 1));
    expect(r).toMatchObject({ finishReason: "stop", stopReason: id });
    expect(r.text).toBe(tokenizer.decode(full.tokens.slice(0, j), { skipSpecialTokens: true }));
  });

  it("EOS ids of the tokenizer stop by default", async () => {
    const rs = await sampler.generate(
      Array.from({ length: 12 }, (_, seed) => ({ prompt: "hi", temperature: 1.5, seed, maxNewTokens: 60 })),
    );
    const eos = rs.filter((r) => r.finishReason === "stop");
    expect(eos.length).toBeGreaterThan(0);
    for (const r of eos) expect(tokenizer.eosTokenIds).toContain(r.stopReason);
  });
});

describe("vocabulary, prompts, seeds", () => {
  it("never samples ids the tokenizer does not have, and renormalises over the rest", async () => {
    const reqs = Array.from({ length: 8 }, (_, seed) => ({
      promptTokens: [1, 2, 3],
      temperature: 3,
      seed,
      maxNewTokens: 30,
      ignoreEos: true,
    }));
    const masked = (await sampler.generate(reqs)).flatMap((r) =>
      r.tokens.map((t, i) => ({ t, lp: r.logprobs[i], slp: r.sampledLogprobs[i] })),
    );
    expect(masked.every(({ t }) => t < 264)).toBe(true);
    expect(masked.every(({ lp, slp }) => slp > lp)).toBe(true); // masked mass removed from the normaliser
    const unmasked = (await new Sampler(model).generate(reqs)).flatMap((r) => r.tokens);
    expect(unmasked.some((t) => t >= 264)).toBe(true);
  });

  it("chat messages go through the template; plain prompts through encode()", async () => {
    const messages = [{ role: "user" as const, content: "hello" }];
    const r = await sampler.submit({ messages, maxNewTokens: 2 });
    expect(r.promptTokens).toEqual(encodeChat(tokenizer, messages, { addGenerationPrompt: true }));
    expect((await sampler.submit({ prompt: "hé", maxNewTokens: 1 })).promptTokens).toEqual([104, 195, 169]);
  });

  it("a seed gives the same sample every time; other seeds give others", async () => {
    const req = { ...base, temperature: 1, seed: 77, adapter: "solver" };
    const a = await sampler.submit(req);
    const b = await sampler.submit(req);
    const c = await sampler.submit({ ...req, seed: 78 });
    expect(a.tokens).toEqual(b.tokens);
    expect(a.tokens).not.toEqual(c.tokens);
    // without a seed, seeds come from the sampler's own seed in submission order
    const s1 = await new Sampler(model, { tokenizer, seed: 5 }).generate([
      { ...base, temperature: 1 },
      { ...base, temperature: 1 },
    ]);
    const s2 = await new Sampler(model, { tokenizer, seed: 5 }).generate([
      { ...base, temperature: 1 },
      { ...base, temperature: 1 },
    ]);
    expect(s1.map((r) => r.tokens)).toEqual(s2.map((r) => r.tokens));
    expect(s1[0].tokens).not.toEqual(s1[1].tokens);
  });

  it("top-k 1 is greedy", async () => {
    const g = await sampler.submit(base);
    const k1 = await sampler.submit({ ...base, temperature: 1.7, topK: 1, seed: 3 });
    expect(k1.tokens).toEqual(g.tokens);
    expect(k1.sampledLogprobs.every((x) => x === 0)).toBe(true);
  });
});

describe("limits and bad requests", () => {
  it("prompt + maxNewTokens beyond the context is CONTEXT_TOO_LONG; exactly the context runs", async () => {
    const long = Array.from({ length: 250 }, (_, i) => i % 200);
    const err = await sampler.submit({ promptTokens: long, maxNewTokens: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MasoError);
    expect(err).toMatchObject({ code: "CONTEXT_TOO_LONG" });
    expect((err as Error).message).toMatch(/250 tokens.*maxNewTokens \(10\).*256/);
    const r = await sampler.submit({ promptTokens: long, maxNewTokens: 6, ignoreEos: true });
    expect(r.tokens).toHaveLength(6);
    expect(() => new Sampler(model, { maxContext: 1000 })).toThrow(/exceeds the model's 256 positions/);
  });

  const cases: [string, unknown, RegExp][] = [
    ["an unknown field", { prompt: "x", max_tokens: 5 }, /max_tokens/],
    ["no prompt", { temperature: 1 }, /exactly one of prompt, messages, promptTokens \(got 0\)/],
    ["two prompts", { prompt: "x", promptTokens: [1] }, /got 2/],
    ["a negative temperature", { prompt: "x", temperature: -1 }, /temperature/],
    ["topP 0", { prompt: "x", topP: 0 }, /topP/],
    ["a fractional topK", { prompt: "x", topK: 1.5 }, /topK/],
    ["maxNewTokens 0", { prompt: "x", maxNewTokens: 0 }, /maxNewTokens/],
    ["a negative seed", { prompt: "x", seed: -1 }, /seed/],
    ["an empty stop string", { prompt: "x", stop: [""] }, /stop/],
    ["an unknown adapter", { prompt: "x", adapter: "nope" }, /adapter 'nope' does not exist/],
    ["a prompt id beyond the tokenizer", { promptTokens: [1, 264] }, /264 is outside \[0, 264\)/],
    ["a stop id beyond the model", { prompt: "x", stopTokenIds: [300] }, /stopTokenIds: id 300/],
    ["an empty prompt", { prompt: "" }, /encodes to no tokens/],
    ["a bad message role", { messages: [{ role: "robot", content: "x" }] }, /messages\.0\.role/],
  ];
  it.each(cases)("rejects %s with GENERATE_REQUEST", async (_name, req, msg) => {
    const err = await sampler.submit(req as GenerationRequest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MasoError);
    expect(err).toMatchObject({ code: "GENERATE_REQUEST" });
    expect((err as Error).message).toMatch(msg);
  });

  it("text features without a tokenizer are refused", async () => {
    const bare = new Sampler(model);
    await expect(bare.submit({ promptTokens: [1], stop: ["x"] })).rejects.toThrow(/need a tokenizer/);
    await expect(bare.submit({ prompt: "x" })).rejects.toThrow(/need a tokenizer/);
    expect((await bare.submit({ promptTokens: [1, 2], maxNewTokens: 3 })).text).toBe("");
  });

  it("bad sampler options are refused", () => {
    expect(() => new Sampler(model, { maxBatch: 0 })).toThrow(MasoError);
    expect(() => new Sampler(model, { blockSize: 2.5 })).toThrow(/blockSize/);
    expect(() => new Sampler(model, { cacheBytes: 10 })).toThrow(/holds no block/);
  });
});
