// The text of a generation as it decodes, for streaming: each sampled token extends the text
// (a split UTF-8 character waits for the rest), and the tail that could still become a stop
// string is held back. At the end the generation's own text decides what is left to send, so
// the pieces always join to exactly that text. Worker-group side; knows nothing of HTTP.

import type { Tokenizer } from "../../engine/tokenizer/types.js";

/** Tokens decoded again with each new one, so merges at token boundaries decode as in the full text. */
const CONTEXT_TOKENS = 4;

/**
 * Sends `onText` the new text of each token, holding back what may start one of `stop`.
 * @example
 * const s = textStream(tok, ["\n\n"], (d) => res.write(d));
 * s.push(id); …; s.end(result.text);
 */
export function textStream(tokenizer: Tokenizer, stop: readonly string[], onText: (delta: string) => void) {
  const tokens: number[] = [];
  let text = ""; // decoded so far
  let sent = 0; // text[0, sent) has gone out
  let prefix = 0;
  let read = 0;
  const hold = stop.reduce((m, s) => Math.max(m, s.length - 1), 0);
  const opts = { skipSpecialTokens: true };
  return {
    push(token: number): void {
      tokens.push(token);
      const before = tokenizer.decode(tokens.slice(prefix, read), opts);
      const after = tokenizer.decode(tokens.slice(prefix), opts);
      if (after.length <= before.length || after.endsWith("\uFFFD")) return;
      text += after.slice(before.length);
      read = tokens.length;
      prefix = Math.max(0, read - CONTEXT_TOKENS);
      const upTo = text.length - hold;
      if (upTo > sent) {
        onText(text.slice(sent, upTo));
        sent = upTo;
      }
    },
    /** The generation ended with `final` as its text: send the rest of it. */
    end(final: string): void {
      // what went out is a prefix of the final text unless a boundary decoded differently; then nothing more is sent safely
      if (final.length > sent && final.startsWith(text.slice(0, sent))) onText(final.slice(sent));
    },
  };
}
