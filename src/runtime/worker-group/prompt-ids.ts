// The prompt side of a worker group's generation: a request's prompt ids, how many new tokens fit
// after them, and the generator request they become (the one place a routed call turns into one).
import { chatPromptIds } from "../../engine/tokenizer/chain-prompt.js";
import { fewestTokens, longestTokenChars } from "../../engine/tokenizer/prompt-bound.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { MasoError } from "../../errors.js";
import type { GeneratorRequest } from "./generator.js";
import type { Sampling } from "../../workflow/role.js";
import type { RoleCallRequest } from "../../workflow/role-call.js";
import type { GenerateRequest } from "../protocol/messages.js";
import type { SampleCache } from "./sample-cache.js";

/** What a prompt is made of: a routed role call's text, chat and chain, or a completion's. */
export type PromptSource = Pick<RoleCallRequest, "episodeId" | "messages" | "prompt" | "tools"> & {
  chatTemplate?: Readonly<Record<string, unknown>>;
  /** The earlier sample of this group whose ids a chat continues (see {@link chainOf}). */
  extend?: { id: number; replayed: number };
};

/** A routed call's chain, where the sample it continues is this group's (`model`); a chain never crosses groups. */
export const chainOf = (req: GenerateRequest, model: string): { id: number; replayed: number } | undefined => {
  const e = req.call.extend;
  return e && e.sample.model === model ? { id: e.sample.id, replayed: e.replayed } : undefined;
};

/** The prompt of a routed role call to group `model`. */
export const promptOf = (req: GenerateRequest, model: string): PromptSource => {
  const extend = chainOf(req, model);
  return { ...req.call, ...(req.chatTemplate && { chatTemplate: req.chatTemplate }), extend };
};

/**
 * A request's prompt ids; a chat that continues one of this episode's samples reuses its ids exactly.
 * A prompt that can never fit in `maxContext` is refused before the seconds its encoding would take.
 */
export function promptIds(
  tokenizer: Tokenizer,
  maxContext: number,
  cache: Pick<SampleCache, "get">,
  req: PromptSource,
): { prompt: number[]; chained: boolean } {
  const least = req.messages ? fewestTokens(tokenizer, req.messages) : Math.ceil(req.prompt!.length / longestTokenChars(tokenizer));
  if (least >= maxContext)
    throw new MasoError(
      "CONTEXT_TOO_LONG",
      `the prompt needs at least ${least} tokens; the model's context is ${maxContext}`,
      "truncate the prompt (oldest history first)",
    );
  if (!req.messages) return { prompt: tokenizer.encode(req.prompt!, { addSpecialTokens: false }), chained: false };
  const opts = { ...(req.chatTemplate && { variables: req.chatTemplate }), ...(req.tools && { tools: [...req.tools] }) };
  const earlier = req.extend ? cache.get(req.extend.id) : undefined;
  const prev =
    req.extend && earlier && earlier.episode === req.episodeId
      ? {
          replayed: req.extend.replayed,
          promptIds: earlier.tokens.subarray(0, earlier.promptLen),
          outputIds: earlier.tokens.subarray(earlier.promptLen),
        }
      : undefined;
  const { ids, chained } = chatPromptIds(tokenizer, req.messages, opts, prev);
  return { prompt: ids, chained };
}

/** At most `asked` new tokens, and no more than the context leaves after the prompt. */
export const fitted = (maxContext: number, prompt: readonly number[], asked: number): number =>
  Math.max(1, Math.min(asked, maxContext - prompt.length));

/** The generator request of a role call or a completion: its prompt ids, sampling, stops, seed and adapter. */
export const submission = (
  tokenizer: Tokenizer,
  prompt: number[],
  req: { sampling: Sampling; stop: readonly string[]; seed: number; topLogprobs?: number },
  adapter: string | null,
  maxNewTokens: number,
): GeneratorRequest => ({
  promptTokens: prompt,
  adapter,
  maxNewTokens,
  temperature: req.sampling.temperature,
  topP: req.sampling.topP,
  topK: req.sampling.topK,
  stopTokenIds: tokenizer.eosTokenIds,
  stop: req.stop,
  seed: req.seed,
  ...(req.topLogprobs && { topLogprobs: req.topLogprobs }),
});

/**
 * The generator request of a routed role call: its limit fitted to the context where the call asks,
 * and its alternatives where it asked for log-probs.
 */
export const routedSubmission = (tokenizer: Tokenizer, maxContext: number, prompt: number[], req: GenerateRequest): GeneratorRequest => {
  const { call } = req;
  const maxNew = call.fitContext ? fitted(maxContext, prompt, call.maxNewTokens) : call.maxNewTokens;
  const topLogprobs = call.logprobs ? call.topLogprobs : undefined;
  return submission(tokenizer, prompt, { sampling: call.sampling, stop: call.stop, seed: req.seed, topLogprobs }, req.adapter, maxNew);
};
