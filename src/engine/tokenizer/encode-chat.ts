// The one right way to turn chat messages into prompt ids with any Tokenizer: template, then encode
// with the markers parsed and no extra framing. It adds no formatting of its own.

import type { ChatMessage, ChatTemplateOptions, Tokenizer } from "./types.js";

/**
 * Applies the chat template and encodes the result, parsing special-token strings into single ids
 * and adding no BOS/EOS beyond what the template wrote.
 *
 * @example
 * const ids = encodeChat(tok, [{ role: "user", content: "hi" }], { addGenerationPrompt: true });
 */
export function encodeChat(tokenizer: Tokenizer, messages: ChatMessage[], opts?: ChatTemplateOptions): number[] {
  const prompt = tokenizer.applyChatTemplate(messages, opts);
  return tokenizer.encode(prompt, { addSpecialTokens: false, parseSpecialTokens: true });
}
