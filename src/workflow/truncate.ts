// Prompt truncation: fit a prompt into a token budget by dropping the *oldest* history first.
// Pinned items (system prompt) and the newest state are never dropped; this file never tokenizes.

import type { ChatMessage } from "../engine/tokenizer/types.js";

/** Counts tokens in a string. */
export type TokenCounter = (text: string) => number;

/** A rough count (4 characters per token) for when no tokenizer is at hand. */
export const approxTokenCount: TokenCounter = (text) => Math.ceil(text.length / 4);

/** The parts of a prompt: kept head, droppable history (oldest first), kept newest state. */
export interface PromptParts<T> {
  pinned: readonly T[];
  history: readonly T[];
  newest: readonly T[];
}

export interface Truncated<T> {
  /** pinned, the history that fits (newest kept), then newest. */
  items: T[];
  /** How many history items were dropped (all from the oldest end). */
  dropped: number;
  /** Tokens of the kept items. */
  tokens: number;
  /** True when pinned + newest alone exceed the budget (nothing more can be dropped). */
  overflow: boolean;
}

/**
 * Drops history items from the oldest end until the prompt fits `maxTokens`.
 *
 * @example
 * dropOldest({ pinned: ["sys"], history: ["t1", "t2", "t3"], newest: ["now"] }, 3, () => 1);
 * // { items: ["sys", "t3", "now"], dropped: 2, tokens: 3, overflow: false }
 */
export function dropOldest<T>(parts: PromptParts<T>, maxTokens: number, count: (item: T) => number): Truncated<T> {
  const sum = (xs: readonly T[]): number => xs.reduce((a, x) => a + count(x), 0);
  const fixed = sum(parts.pinned) + sum(parts.newest);
  let budget = maxTokens - fixed;
  let keepFrom = parts.history.length;
  while (keepFrom > 0) {
    const cost = count(parts.history[keepFrom - 1]);
    if (cost > budget) break;
    budget -= cost;
    keepFrom--;
  }
  const kept = parts.history.slice(keepFrom);
  return {
    items: [...parts.pinned, ...kept, ...parts.newest],
    dropped: keepFrom,
    tokens: fixed + sum(kept),
    overflow: fixed > maxTokens,
  };
}

/**
 * Fits chat messages into `maxTokens`: leading system messages are pinned, the last message is
 * the newest state, and the messages between are history, dropped oldest first.
 *
 * @example
 * truncateMessages(messages, 2048, approxTokenCount).items;
 */
export function truncateMessages(
  messages: readonly ChatMessage[],
  maxTokens: number,
  count: TokenCounter = approxTokenCount,
): Truncated<ChatMessage> {
  let head = 0;
  while (head < messages.length - 1 && messages[head].role === "system") head++;
  const parts: PromptParts<ChatMessage> = {
    pinned: messages.slice(0, head),
    history: messages.slice(head, Math.max(head, messages.length - 1)),
    newest: messages.length > 0 ? messages.slice(-1) : [],
  };
  // a small per-message overhead for the chat template's role markers
  return dropOldest(parts, maxTokens, (m) => count(m.content) + 4);
}
