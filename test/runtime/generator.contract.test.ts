// One suite for every Generator: the naive reference sampler, the engine's KV-cache Sampler and
// the lane generator (Samplers on worker threads over shared weights).
// Results do not depend on batching, reported log-probs match a log-prob forward at the sampling
// temperature, greedy is the argmax, stops and limits behave, requests batch, bad requests reject.
import { describe, expect, it } from "vitest";
import { Decoder } from "../../src/engine/model/decoder.js";
import { MasoError } from "../../src/errors.js";
import { encodeChat } from "../../src/engine/tokenizer/encode-chat.js";
import { forwardLogprobs } from "../../src/rl/update/forward-logprobs.js";
import type { Tokenizer } from "../../src/engine/tokenizer/types.js";
import { createNaiveGenerator, createSamplerGenerator, type Generator, type GeneratorRequest } from "../../src/runtime/index.js";
import { createLaneGenerator } from "../../src/runtime/worker-group/lanes/lane-generator.js";
import { ask, END_ID, probFirst, tinyConfig, tok, warmModel } from "./helpers.js";

const req = (over: Partial<GeneratorRequest> = {}): GeneratorRequest => ({
  promptTokens: encodeChat(tok, ask("hello"), { addGenerationPrompt: true }),
  adapter: null,
  maxNewTokens: 6,
  temperature: 1,
  topP: 1,
  topK: 0,
  stopTokenIds: tok.eosTokenIds,
  stop: [],
  seed: 1,
  ...over,
});

// [name, factory, least mean batch of five concurrent requests (two lanes split them)]
const impls: [string, (m: Decoder, t: Tokenizer) => Generator, number][] = [
  ["naive", createNaiveGenerator, 2],
  ["kv-cache sampler", createSamplerGenerator, 2],
  ["two lanes", (m, t) => createLaneGenerator(m, t, { lanes: 2 }), 1.5],
];

describe.each(impls)("generator contract: %s", (_name, createGenerator, minBatch) => {
  const model = new Decoder(tinyConfig(), undefined, { seed: 4 });

  it("gives the same result for a seed alone or inside a batch, and batches concurrent requests", async () => {
    const gen = createGenerator(model, tok);
    const alone = await gen.submit(req({ seed: 42 }));
    const many = await Promise.all([1, 2, 42, 3, 4].map((seed) => gen.submit(req({ seed }))));
    expect(many[2].tokens).toEqual(alone.tokens);
    const s = gen.stats();
    expect(s.requests).toBe(6);
    expect(s.sequenceSteps / s.steps).toBeGreaterThan(minBatch);
  });

  it("tells onToken each sampled token before the result (the reference sampler may not stream)", async () => {
    const gen = createGenerator(model, tok);
    const heard: number[] = [];
    let resolved = false;
    const out = await gen
      .submit(req({ seed: 7, maxNewTokens: 12, stopTokenIds: [] }), (t) => {
        expect(resolved).toBe(false);
        heard.push(t);
      })
      .finally(() => {
        resolved = true;
      });
    // a terminating stop id (the tokenizer's end of turn) is no text: it is not heard
    const text = out.finishReason === "stop" ? out.tokens.slice(0, -1) : out.tokens;
    if (_name === "naive") expect(heard).toEqual([]);
    else expect(heard).toEqual(text);
  });

  it("reports log-probs equal to a log-prob forward at the sampling temperature", async () => {
    const gen = createGenerator(model, tok);
    const r = req({ temperature: 0.7, topK: 50, topP: 0.9, maxNewTokens: 5, stopTokenIds: [] });
    const out = await gen.submit(r);
    const [scored] = forwardLogprobs(model, [
      { tokens: [...r.promptTokens, ...out.tokens], promptLen: r.promptTokens.length, adapter: null, temperature: 0.7 },
    ]);
    expect(out.tokens).toHaveLength(5);
    expect(out.finishReason).toBe("length");
    for (let t = 0; t < 5; t++) expect(out.logprobs[t]).toBeCloseTo(scored.logp[t], 4);
  });

  it("greedy picks the argmax; stop ids and stop strings end generation", async () => {
    const warm = warmModel(3, ["hi"], ["xyz!"]);
    const gen = createGenerator(warm, tok);
    const prompt = encodeChat(tok, ask("hi"), { addGenerationPrompt: true });
    const greedy = await gen.submit(req({ promptTokens: prompt, temperature: 0 }));
    expect(greedy.text).toBe("xyz!");
    expect(greedy.tokens[greedy.tokens.length - 1]).toBe(END_ID);
    expect(greedy.finishReason).toBe("stop");
    expect(probFirst(warm, "hi", "x")).toBeGreaterThan(0.5);
    const cut = await gen.submit(req({ promptTokens: prompt, temperature: 0, stop: ["z"] }));
    expect(cut.text).toBe("xy");
    expect(cut.tokens).toHaveLength(3); // the tokens that formed the stop string stay
    expect(cut.finishReason).toBe("stop");
  });

  it("rejects bad requests with MasoErrors", async () => {
    const gen = createGenerator(model, tok);
    await expect(gen.submit(req({ adapter: "nope" }))).rejects.toThrow(/nope/);
    await expect(gen.submit(req({ maxNewTokens: 0 }))).rejects.toThrow(/maxNewTokens/);
    await expect(gen.submit(req({ promptTokens: Array(200).fill(97) }))).rejects.toBeInstanceOf(MasoError);
  });
});

describe("generator implementations agree", () => {
  it("greedy decoding gives the same tokens and log-probs", async () => {
    const model = new Decoder(tinyConfig(), undefined, { seed: 8 });
    const outs = await Promise.all(
      impls.map(([, make]) => make(model, tok).submit(req({ temperature: 0, maxNewTokens: 8, stopTokenIds: [] }))),
    );
    for (const out of outs.slice(1)) {
      expect(out.tokens).toEqual(outs[0].tokens);
      outs[0].logprobs.forEach((lp, t) => {
        expect(out.logprobs[t]).toBeCloseTo(lp, 4);
      });
    }
  });

  // Both draw with sampleToken from a per-request seeded stream, so sampled tokens agree wherever
  // their logits do; the two forwards differ only in float rounding, which no draw here sits within.
  it.each([
    ["temperature 1", { temperature: 1 }],
    ["temperature 0.7, top-k 50, top-p 0.9", { temperature: 0.7, topK: 50, topP: 0.9 }],
  ])("sampling (%s) gives the same tokens and log-probs for the same seeds", async (_name, over) => {
    const model = new Decoder(tinyConfig(), undefined, { seed: 8 });
    const seeds = [1, 2, 3, 4, 5, 6, 7, 8];
    const outs = await Promise.all(
      impls.map(([, make]) => {
        const gen = make(model, tok);
        return Promise.all(seeds.map((seed) => gen.submit(req({ ...over, seed, maxNewTokens: 8 }))));
      }),
    );
    for (const out of outs.slice(1)) {
      seeds.forEach((_, i) => {
        expect(out[i].tokens).toEqual(outs[0][i].tokens);
        outs[0][i].logprobs.forEach((lp, t) => {
          expect(out[i].logprobs[t]).toBeCloseTo(lp, 4);
        });
      });
    }
    expect(new Set(outs[0].map((o) => o.tokens.join())).size).toBeGreaterThan(1); // the seeds do sample
  });

  // the naive reference computes no alternatives; the lanes carry the Sampler's across threads
  it("the KV-cache sampler and its lanes return the same top log-probs; asking changes no token", async () => {
    const model = new Decoder(tinyConfig(), undefined, { seed: 8 });
    const r = req({ temperature: 0.7, maxNewTokens: 6, stopTokenIds: [], seed: 3 });
    const [naive, kv, lanes] = await Promise.all(impls.map(([, make]) => make(model, tok).submit({ ...r, topLogprobs: 4 })));
    const plain = await createSamplerGenerator(model, tok).submit(r);
    expect(naive.topLogprobs).toBeUndefined();
    expect(kv.tokens).toEqual(plain.tokens);
    expect(kv.logprobs).toEqual(plain.logprobs);
    expect(kv.topLogprobs).toHaveLength(6);
    expect(kv.topLogprobs!.every((top) => top.length === 4)).toBe(true);
    expect(lanes.topLogprobs).toEqual(kv.topLogprobs);
  });
});
