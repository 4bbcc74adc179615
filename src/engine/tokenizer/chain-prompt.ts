// Prompt ids that continue an earlier generation exactly: its prompt ids and sampled ids, then the
// encoding of what the chat template renders after that turn. The sampled ids are never
// re-encoded from text (a re-encoding can differ, and templates drop parts such as Qwen3's
// <think> blocks). Pure; the caller decides which earlier turn a conversation replays.

import { encodeChat } from "./encode-chat.js";
import type { ChatMessage, ChatTemplateOptions, Tokenizer } from "./types.js";

const SENTINEL = "\u0000maso-turn\u0000";

/**
 * The ids of `messages` (ending in a generation prompt) where `messages[replayed]` is the assistant
 * turn that `prev` generated: `prev.promptIds + prev.outputIds + encode(rest)`. Null when the
 * template does not render that turn's place exactly once (then encode afresh).
 * @example
 * const ids = extendedPromptIds(tok, [...first, reply, toolResult], first.length, { promptIds, outputIds }, { tools });
 */
export function extendedPromptIds(
  tok: Tokenizer,
  messages: readonly ChatMessage[],
  replayed: number,
  prev: { promptIds: ArrayLike<number>; outputIds: ArrayLike<number> },
  opts: Omit<ChatTemplateOptions, "addGenerationPrompt"> = {},
): number[] | null {
  if (messages[replayed]?.role !== "assistant") return null;
  const withSentinel = [...messages.slice(0, replayed), { role: "assistant" as const, content: SENTINEL }, ...messages.slice(replayed + 1)];
  const text = tok.applyChatTemplate(withSentinel, { ...opts, addGenerationPrompt: true });
  const at = text.indexOf(SENTINEL);
  if (at < 0 || text.indexOf(SENTINEL, at + 1) >= 0) return null;
  let after = text.slice(at + SENTINEL.length);
  const last = prev.outputIds.length > 0 ? prev.outputIds[prev.outputIds.length - 1] : undefined;
  // the sampled stop id already ends the turn; the template's own end-of-turn text would repeat it
  if (last !== undefined && tok.eosTokenIds.includes(last)) {
    const eosText = tok.decode([last]);
    if (after.startsWith(eosText)) after = after.slice(eosText.length);
  }
  return [
    ...Array.from(prev.promptIds),
    ...Array.from(prev.outputIds),
    ...tok.encode(after, { addSpecialTokens: false, parseSpecialTokens: true }),
  ];
}

/**
 * The prompt ids of a chat: continuing `prev` exactly when it is given and the template allows
 * (see {@link extendedPromptIds}), else encoded afresh. `chained` says which.
 * @example const { ids, chained } = chatPromptIds(tok, messages, { tools }, { replayed: 2, promptIds, outputIds });
 */
export function chatPromptIds(
  tok: Tokenizer,
  messages: readonly ChatMessage[],
  opts: Omit<ChatTemplateOptions, "addGenerationPrompt">,
  prev?: { replayed: number; promptIds: ArrayLike<number>; outputIds: ArrayLike<number> },
): { ids: number[]; chained: boolean } {
  const ids = prev ? extendedPromptIds(tok, messages, prev.replayed, prev, opts) : null;
  if (ids) return { ids, chained: true };
  return { ids: encodeChat(tok, [...messages], { ...opts, addGenerationPrompt: true }), chained: false };
}
