// Public surface of generation: the continuous-batching Sampler, its request/result types and the
// pure sampling helpers. Re-exports only; no logic here.
export { Sampler, type SamplerOptions, type SamplerStats } from "./sampler.js";
export {
  DEFAULT_MAX_NEW_TOKENS,
  type FinishReason,
  type GenerationRequest,
  type GenerationResult,
} from "./request.js";
export { sampleToken, samplingSupport, type SampledToken, type Sampling } from "./sampling.js";
export { MAX_TOP_LOGPROBS, topLogprobs, type TopLogprob } from "./top-logprobs.js";
