// A cheap lower bound on a prompt's token count: no token decodes to more characters than the
// tokenizer's longest one, so text of N characters needs at least N / longest tokens. It lets a
// worker group refuse a prompt that can never fit the context without tokenizing it (megabytes of
// text take seconds to encode, on a thread other calls share). No model here.
import type { ChatMessage, Tokenizer } from "./types.js";

const longest = new WeakMap<Tokenizer, number>();

/** The most characters any single token decodes to (special tokens included), computed once per tokenizer. */
export function longestTokenChars(tok: Tokenizer): number {
  let n = longest.get(tok) ?? tok.longestTokenChars?.();
  if (n === undefined) {
    n = 1;
    for (let id = 0; id < tok.vocabSize; id++) n = Math.max(n, tok.decode([id], { skipSpecialTokens: false }).length);
  }
  longest.set(tok, n);
  return n;
}

/**
 * The fewest tokens `messages` can encode to, whatever the chat template adds.
 * @example if (fewestTokens(tok, messages) > maxContext) throw contextTooLong(…);
 */
export function fewestTokens(tok: Tokenizer, messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += m.content.length;
  return Math.ceil(chars / longestTokenChars(tok));
}
