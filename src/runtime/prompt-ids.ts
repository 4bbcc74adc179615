// The prompt side of a worker group's generation: a request's prompt ids, how many new tokens fit
// after them, and the generator request they become.
import { chatPromptIds } from "../engine/tokenizer/chain-prompt.js";
import { fewestTokens, longestTokenChars } from "../engine/tokenizer/prompt-bound.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";
import { MasoError } from "../errors.js";
import type { GeneratorRequest } from "./generator.js";
import type { GenerateRequest } from "./messages.js";
import type { SampleCache } from "./sample-cache.js";

/**
 * A request's prompt ids; a chat that continues one of this episode's samples reuses its ids exactly.
 * A prompt that can never fit in `maxContext` is refused before the seconds its encoding would take.
 */
export function promptIds(
  tokenizer: Tokenizer,
  maxContext: number,
  cache: Pick<SampleCache, "get">,
  req: GenerateRequest,
): { prompt: number[]; chained: boolean } {
  const least = req.messages ? fewestTokens(tokenizer, req.messages) : Math.ceil(req.prompt.length / longestTokenChars(tokenizer));
  if (least >= maxContext)
    throw new MasoError(
      "CONTEXT_TOO_LONG",
      `the prompt needs at least ${least} tokens; the model's context is ${maxContext}`,
      "truncate the prompt (oldest history first)",
    );
  if (!req.messages) return { prompt: tokenizer.encode(req.prompt, { addSpecialTokens: false }), chained: false };
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

/** The generator request of a role call or a completion: its prompt ids, sampling, stops and seed. */
export const submission = (
  tokenizer: Tokenizer,
  prompt: number[],
  req: Pick<GenerateRequest, "sampling" | "stop" | "seed">,
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
});
