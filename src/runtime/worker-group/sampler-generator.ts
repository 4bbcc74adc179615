// Adapts the engine's KV-cache continuous-batching Sampler (src/engine/generate) to the worker
// group's Generator interface. Translation only: no sampling logic lives here.
import type { Decoder } from "../../engine/model/decoder.js";
import { Sampler, type SamplerOptions } from "../../engine/generate/index.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import type { Generator } from "./generator.js";

/**
 * The production generator: paged KV cache, prefix sharing, seeded per-request sampling.
 *
 * @example
 * const wg = await createWorkerGroup(spec, { roles, generator: (m, t) => createSamplerGenerator(m, t, { maxBatch: 128 }) });
 */
export function createSamplerGenerator(model: Decoder, tokenizer: Tokenizer, options: Omit<SamplerOptions, "tokenizer"> = {}): Generator {
  const sampler = new Sampler(model, { ...options, tokenizer });
  let requests = 0;
  return {
    async submit(req, onToken) {
      requests++;
      const r = await sampler.submit(
        {
          promptTokens: req.promptTokens,
          adapter: req.adapter,
          maxNewTokens: req.maxNewTokens,
          temperature: req.temperature,
          topK: req.topK,
          topP: req.topP,
          stop: req.stop,
          stopTokenIds: req.stopTokenIds,
          seed: req.seed,
          ...(req.topLogprobs && { topLogprobs: req.topLogprobs }),
        },
        onToken,
      );
      return {
        tokens: r.tokens,
        logprobs: r.logprobs,
        text: r.text,
        finishReason: r.finishReason,
        ...(r.topLogprobs && { topLogprobs: r.topLogprobs }),
      };
    },
    stats() {
      const s = sampler.stats();
      // decode steps carry one token per active sequence, so tokens per step is the decode batch
      return { requests, steps: s.steps, sequenceSteps: s.decodeTokens, busyMs: s.prefillMs + s.decodeMs };
    },
    weightsChanged: () => sampler.weightsChanged(),
  };
}
