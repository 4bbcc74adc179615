// The small generation interface a worker group codes against: submit one request, get tokens,
// their sampling log-probs and text back. Implementations batch concurrent requests themselves.
// Types only; the naive reference sampler lives in naive-generator.ts.
import type { GenerationRequest, GenerationResult } from "../../engine/generate/request.js";
import type { GeneratorStats } from "../protocol/messages.js";

/**
 * One request: the engine's {@link GenerationRequest}, already tokenized, with every field a worker
 * group sets given. Generation ends after a `stopTokenIds` id (kept in `tokens`) or once the text
 * contains a `stop` string (cut from `text`, its tokens kept); `seed` makes results independent of
 * batching. `topLogprobs` (optional, 0–20) asks for each token's most likely alternatives.
 */
export type GeneratorRequest = Required<
  Pick<GenerationRequest, "promptTokens" | "adapter" | "maxNewTokens" | "temperature" | "topP" | "topK" | "stopTokenIds" | "stop" | "seed">
> &
  Pick<GenerationRequest, "topLogprobs">;

/**
 * What comes back for one request: the part of the engine's {@link GenerationResult} a worker group
 * reads. `topLogprobs` comes back where the request asked for it and the implementation computes it
 * (the KV-cache Sampler and its lanes do; the naive reference leaves it out).
 */
export type GeneratorResult = Pick<GenerationResult, "tokens" | "logprobs" | "text" | "finishReason" | "topLogprobs">;

/**
 * A batching sampler. `submit` may be called many times before any result is ready; the
 * implementation decides how to batch.
 *
 * @example
 * const r = await generator.submit({ promptTokens, adapter: null, maxNewTokens: 8, temperature: 1, topP: 1, topK: 0, stopTokenIds: tok.eosTokenIds, stop: [], seed: 1 });
 */
export interface Generator {
  /** `onToken` hears each generated token as it is sampled (a terminating stop token id excluded). */
  submit(request: GeneratorRequest, onToken?: (token: number) => void): Promise<GeneratorResult>;
  stats(): GeneratorStats;
  /** Called on every bump of the worker group's weight version (weight-versions.ts): drop anything computed with the old weights (e.g. shared prefixes). */
  weightsChanged?(): void;
}
