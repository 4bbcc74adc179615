// The small generation interface a worker group codes against: submit one request, get tokens,
// their sampling log-probs and text back. Implementations batch concurrent requests themselves.
// Types only; the naive reference sampler lives in naive-generator.ts.

/** One generation request, already tokenized. */
export interface GenerationRequest {
  promptTokens: readonly number[];
  /** LoRA adapter to sample with, or null for the base weights. */
  adapter: string | null;
  maxNewTokens: number;
  /** 0 = greedy. */
  temperature: number;
  /** Nucleus cut in (0, 1]; 1 = off. */
  topP: number;
  /** Top-k cut; 0 = off. */
  topK: number;
  /** Generation ends after emitting one of these ids (the id is kept in `tokens`). */
  stopTokenIds: readonly number[];
  /** Generation ends once the decoded text contains one of these (cut from `text`, kept in `tokens`). */
  stopStrings: readonly string[];
  /** Seeds this request's sampling noise, so results do not depend on how requests were batched. */
  seed: number;
}

/** What comes back for one request. */
export interface GenerationResult {
  /** Generated ids, including the stop token or the tokens that formed a stop string. */
  tokens: number[];
  /** log p(token) under the sampling distribution (logits / temperature; 1 when greedy), per token. */
  logprobs: number[];
  /** Decoded output without special tokens, cut before the first stop string. */
  text: string;
  finishReason: "stop" | "length";
}

/** Counters for benchmarks: how many sequences each decode step carried. */
export interface GeneratorStats {
  requests: number;
  /** Forward passes (decode steps) run. */
  steps: number;
  /** Sum over steps of the sequences in the step; steps > 0 ⇒ mean batch = sequenceSteps / steps. */
  sequenceSteps: number;
  /** Wall time spent inside decode steps (ms). */
  busyMs: number;
}

/**
 * A batching sampler. `submit` may be called many times before any result is ready; the
 * implementation decides how to batch.
 *
 * @example
 * const r = await generator.submit({ promptTokens, adapter: null, maxNewTokens: 8, temperature: 1, topP: 1, topK: 0, stopTokenIds: tok.eosTokenIds, stopStrings: [], seed: 1 });
 */
export interface Generator {
  submit(request: GenerationRequest): Promise<GenerationResult>;
  stats(): GeneratorStats;
  /** Called after every update: drop anything computed with the old weights (e.g. shared prefixes). */
  weightsChanged?(): void;
}
