// A bf16 model's sampler steps compute the bf16 training forward: the KV-cache step sets the
// process-wide precision on entry, so log-probs match the bf16 forward (not the fp32 one) even when
// an fp32 model ran in between.
import { describe, expect, it } from "vitest";
import { Sampler } from "../../src/engine/generate/sampler.js";
import { native } from "../../src/native/binding.js";
import { recompute, worst } from "./check-forward.js";
import { tinyModel } from "./tiny-models.js";

const prompt = [5, 17, 42, 99, 3, 250, 7, 8, 9, 10, 11];

describe.skipIf(!native().bf16().onednn)("bf16 generation", () => {
  it("sampled log-probs equal the bf16 forward's, with an fp32 model's forward before each request", async () => {
    const bf = tinyModel("qwen2", 3);
    bf.precision = "bf16";
    const fp = tinyModel("qwen2", 3); // same weights, fp32
    const sampler = new Sampler(bf, { blockSize: 4 });
    for (const seed of [1, 2]) {
      fp.forward([{ tokens: prompt, scoreMask: prompt.map((_, i) => (i > 0 ? 1 : 0)) }]);
      expect(native().precision()).toBe("fp32");
      const r = await sampler.submit({ promptTokens: prompt, temperature: 0.8, seed, maxNewTokens: 12 });
      const ref = recompute(bf, r);
      const ref32 = recompute(fp, r);
      expect(worst(r.logprobs, ref.logp)).toBeLessThan(1e-4);
      // bf16 operand rounding moves log-probs far more than accumulation order does
      expect(worst(r.logprobs, ref32.logp)).toBeGreaterThan(1e-3);
    }
  });
});
