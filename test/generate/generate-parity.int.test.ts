// The sampler computes the training forward's function: greedy tokens are the argmax of a full
// Decoder.forward recomputation at every position, and returned log-probs equal the forward's at
// the same temperature, for every architecture variant, with and without a LoRA adapter.
import { describe, expect, it } from "vitest";
import type { Architecture } from "../../src/engine/config.js";
import { Sampler } from "../../src/engine/generate/sampler.js";
import { recompute, worst } from "./check-forward.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

const prompt = [5, 17, 42, 99, 3, 250, 7, 8, 9, 10, 11];

describe.each<Architecture>(["llama", "qwen2", "qwen3"])("%s", (arch) => {
  const model = tinyModel(arch, 3);
  addRandomAdapter(model, "lora", 11);

  it.each([null, "lora"])("greedy = argmax of the full forward, log-probs match (adapter %s)", async (adapter) => {
    const sampler = new Sampler(model, { blockSize: 4 }); // several blocks per sequence
    const r = await sampler.submit({ promptTokens: prompt, adapter, temperature: 0, maxNewTokens: 20 });
    expect(r.tokens).toHaveLength(20);
    expect(r.finishReason).toBe("length");
    const ref = recompute(model, r);
    expect(r.tokens).toEqual(ref.argmax);
    expect(worst(r.logprobs, ref.logp)).toBeLessThan(1e-4);
    expect(r.sampledLogprobs.every((x) => x === 0)).toBe(true);
  });

  it("sampled log-probs equal the forward at the sampling temperature", async () => {
    const sampler = new Sampler(model);
    const rs = await sampler.generate([
      { promptTokens: prompt, adapter: "lora", temperature: 0.7, seed: 1, maxNewTokens: 16 },
      { promptTokens: prompt.slice(0, 4), temperature: 1.3, seed: 2, maxNewTokens: 16 },
    ]);
    for (const r of rs) {
      const ref = recompute(model, r);
      expect(worst(r.logprobs, ref.logp)).toBeLessThan(1e-4);
      // no top-k/top-p and an unmasked vocabulary: the sampled distribution is the tempered one
      expect(worst(r.sampledLogprobs, r.logprobs)).toBeLessThan(1e-6);
    }
  });
});

describe("live weights", () => {
  it("a weight update made in place is used by the next request, with no copy", async () => {
    const model = tinyModel("qwen2", 4);
    const sampler = new Sampler(model);
    const req = { promptTokens: prompt, temperature: 0, maxNewTokens: 8 };
    const before = await sampler.submit(req);
    const w = model.params.get("model.layers.1.mlp.down_proj.weight");
    for (let i = 0; i < w.length; i++) w[i] *= -3;
    sampler.weightsChanged();
    const after = await sampler.submit(req);
    expect(after.tokens).not.toEqual(before.tokens);
    expect(after.tokens).toEqual(recompute(model, after).argmax);
  });
});
