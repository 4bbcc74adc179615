// What a caller asks the sampler for and what it gets back, and the one place requests are checked
// and turned into prompt tokens (plain text, chat messages through the tokenizer's template, or ids).
// Validation only: nothing here touches the model or the cache.
import { z } from "zod";
import { NEW_TOKEN_DEFAULTS } from "../../defaults.js";
import { MasoError } from "../../errors.js";
import type { ModelConfig } from "../config.js";
import { encodeChat } from "../tokenizer/encode-chat.js";
import type { ChatMessage, ChatTemplateOptions, Tokenizer } from "../tokenizer/types.js";
import type { Sampling } from "./sampling.js";
import { MAX_TOP_LOGPROBS, type TopLogprob } from "./top-logprobs.js";

/** One generation request. Give exactly one of `prompt`, `messages`, `promptTokens`. */
export interface GenerationRequest {
  /** Plain prompt text, encoded with the tokenizer's own framing (e.g. BOS) and no chat template. */
  prompt?: string;
  /** Chat turns, rendered by the tokenizer's chat template with a generation prompt at the end. */
  messages?: ChatMessage[];
  /** Ready prompt ids. */
  promptTokens?: readonly number[];
  /** Template options for `messages` (default `{ addGenerationPrompt: true }`). */
  chatTemplate?: ChatTemplateOptions;
  /** LoRA adapter of the model to sample with; null/absent = base weights. */
  adapter?: string | null;
  /** Most tokens to generate (default 256). prompt + maxNewTokens must fit the model's context. */
  maxNewTokens?: number;
  /** 0 = greedy; default 1. */
  temperature?: number;
  /** Keep the k most likely tokens; 0 (default) = all. */
  topK?: number;
  /** Nucleus mass in (0, 1]; 1 (default) = all. */
  topP?: number;
  /** Stop when the text contains any of these; the result's text ends before it. Needs a tokenizer. */
  stop?: readonly string[];
  /** More token ids that end generation (the tokenizer's and model's EOS ids always do, unless ignoreEos). */
  stopTokenIds?: readonly number[];
  /** Do not stop at EOS ids (stopTokenIds still apply). */
  ignoreEos?: boolean;
  /** Leave special tokens (chat markers, BOS) out of the text that stop strings and the result see (default true, like vLLM). */
  skipSpecialTokens?: boolean;
  /** Seed of this request's sampling noise; same seed, same tokens, in any batch. Default: from the sampler's seed. */
  seed?: number;
  /**
   * Per generated token, also return this many most likely alternatives (0–20, default 0: none, and
   * no cost). Never changes what is sampled.
   */
  topLogprobs?: number;
}

/** Why generation ended. */
export type FinishReason = "stop" | "length";

/** What a request returns. */
export interface GenerationResult {
  promptTokens: number[];
  /** Generated ids; a terminating stop token id is included (the trainer scores it), a stop string's tokens too. */
  tokens: number[];
  /**
   * Per generated token: log softmax(z / T) over the full model vocabulary, T = the request's
   * temperature (1 when greedy). No top-k/top-p/vocabulary mask: the quantity a verl-style trainer
   * recomputes with `Decoder.forward({ temperature: T })`.
   */
  logprobs: number[];
  /** Per generated token: log-prob under the distribution actually sampled from (mask, top-k, top-p); 0 when greedy. */
  sampledLogprobs: number[];
  /**
   * Per generated token, when the request asked for `topLogprobs` > 0: that many most likely ids
   * below the tokenizer's vocabulary, most likely first (ties: lower id first), with log-probs as
   * `logprobs` defines them. Absent otherwise.
   */
  topLogprobs?: TopLogprob[][];
  /**
   * Decoded generation without the terminating stop token (and, by default, without special tokens),
   * cut before a stop string. "" without a tokenizer.
   */
  text: string;
  finishReason: FinishReason;
  /** The stop token id or stop string that ended generation. */
  stopReason?: number | string;
  adapter: string | null;
  /** Temperature the logprobs are computed at (1 for greedy requests). */
  temperature: number;
}

/** A checked request with its prompt ids and every default filled in. */
export interface NormalizedRequest extends Sampling {
  promptTokens: number[];
  adapter: string | null;
  maxNewTokens: number;
  stop: string[];
  stopTokenIds: Set<number>;
  skipSpecialTokens: boolean;
  seed: number;
  /** Alternatives to return per generated token; 0 = none. */
  topLogprobs: number;
}

/** Default for {@link GenerationRequest.maxNewTokens}: a role's (src/defaults.ts). */
export const DEFAULT_MAX_NEW_TOKENS = NEW_TOKEN_DEFAULTS.role;

const int = z.number().int();
const message = z.strictObject({ role: z.enum(["system", "user", "assistant", "tool"]), content: z.string() });
const schema = z.strictObject({
  prompt: z.string().optional(),
  messages: z.array(message).min(1).optional(),
  promptTokens: z.array(int.nonnegative()).min(1).optional(),
  chatTemplate: z
    .strictObject({
      addGenerationPrompt: z.boolean().optional(),
      enableThinking: z.boolean().optional(),
      tools: z.array(z.unknown()).optional(),
    })
    .optional(),
  adapter: z.string().nullable().optional(),
  maxNewTokens: int.min(1).optional(),
  temperature: z.number().min(0).refine(Number.isFinite, "must be finite").optional(),
  topK: int.min(0).optional(),
  topP: z.number().gt(0).lte(1).optional(),
  stop: z.array(z.string().min(1)).optional(),
  stopTokenIds: z.array(int.nonnegative()).optional(),
  ignoreEos: z.boolean().optional(),
  skipSpecialTokens: z.boolean().optional(),
  seed: int.min(0).max(0xffffffff).optional(),
  topLogprobs: int.min(0).max(MAX_TOP_LOGPROBS).optional(),
});

/** Context a request is checked against. */
export interface RequestContext {
  config: ModelConfig;
  tokenizer?: Tokenizer;
  hasAdapter(name: string): boolean;
  maxContext: number;
  defaultSeed(): number;
}

const bad = (message: string, hint = ""): MasoError => new MasoError("GENERATE_REQUEST", message, hint);

/** Checks a request and fills defaults; throws MasoError GENERATE_REQUEST or CONTEXT_TOO_LONG. */
export function normalizeRequest(raw: GenerationRequest, ctx: RequestContext): NormalizedRequest {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length > 0 ? issue.path.join(".") : "request";
    throw bad(`${where}: ${issue.message}`, "see GenerationRequest for the accepted fields");
  }
  const r = parsed.data;
  const given = [r.prompt !== undefined, r.messages !== undefined, r.promptTokens !== undefined].filter(Boolean).length;
  if (given !== 1) throw bad(`give exactly one of prompt, messages, promptTokens (got ${given})`);
  const tok = ctx.tokenizer;
  const V = ctx.config.vocabSize;
  if ((r.prompt !== undefined || r.messages !== undefined || r.stop?.length) && !tok) {
    throw bad("text prompts, chat messages and stop strings need a tokenizer", "create the Sampler with { tokenizer }");
  }
  let promptTokens: number[];
  if (r.promptTokens) promptTokens = r.promptTokens;
  else if (r.messages) promptTokens = encodeChat(tok!, r.messages, { addGenerationPrompt: true, ...r.chatTemplate });
  else promptTokens = tok!.encode(r.prompt!);
  if (promptTokens.length === 0) throw bad("the prompt encodes to no tokens");
  const limit = tok ? Math.min(V, tok.vocabSize) : V;
  const outside = promptTokens.find((t) => t >= limit);
  if (outside !== undefined) throw bad(`prompt token id ${outside} is outside [0, ${limit})`);
  const extraStops = r.stopTokenIds ?? [];
  const badStop = extraStops.find((t) => t >= V);
  if (badStop !== undefined) throw bad(`stopTokenIds: id ${badStop} is outside [0, ${V})`);
  const adapter = r.adapter ?? null;
  if (adapter !== null && !ctx.hasAdapter(adapter))
    throw bad(`adapter '${adapter}' does not exist on this model`, "call model.addAdapter() first");
  const maxNewTokens = r.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS;
  if (promptTokens.length + maxNewTokens > ctx.maxContext) {
    throw new MasoError(
      "CONTEXT_TOO_LONG",
      `prompt (${promptTokens.length} tokens) + maxNewTokens (${maxNewTokens}) exceeds the maximum context of ${ctx.maxContext}`,
      "truncate the prompt (oldest history first) or lower maxNewTokens",
    );
  }
  const stopTokenIds = new Set<number>(extraStops);
  if (!r.ignoreEos) {
    for (const id of [...(tok?.eosTokenIds ?? []), ...(ctx.config.eosTokenIds ?? [])]) if (id < V) stopTokenIds.add(id);
  }
  return {
    promptTokens: [...promptTokens],
    adapter,
    maxNewTokens,
    temperature: r.temperature ?? 1,
    topK: r.topK ?? 0,
    topP: r.topP ?? 1,
    stop: r.stop ?? [],
    stopTokenIds,
    skipSpecialTokens: r.skipSpecialTokens ?? true,
    seed: r.seed ?? ctx.defaultSeed(),
    topLogprobs: r.topLogprobs ?? 0,
  };
}
