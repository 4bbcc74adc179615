// Incremental detokenisation of a growing generation and stop-string detection on it: each new token
// extends the text (bytes of a split UTF-8 character wait for the rest), so a stop string spread
// over several tokens is caught as soon as it is complete. Knows nothing of models or sampling.
import type { Tokenizer } from "../tokenizer/types.js";

/** Context tokens decoded with each new one, so merges at token boundaries decode as in full text. */
const CONTEXT_TOKENS = 4;

/** Tracks the text of generated tokens and watches for stop strings. */
export class StopText {
  private readonly tokens: number[] = [];
  private text = "";
  private prefix = 0; // tokens[prefix, read) were decoded to produce the text's tail
  private read = 0;
  private readonly longest: number;

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly stop: readonly string[],
    private readonly skipSpecialTokens: boolean,
  ) {
    this.longest = stop.reduce((m, s) => Math.max(m, s.length), 0);
  }

  /** Adds a generated token; returns the stop string it completed, if any. */
  push(token: number): string | undefined {
    this.tokens.push(token);
    if (this.stop.length === 0) return undefined;
    const opts = { skipSpecialTokens: this.skipSpecialTokens };
    const before = this.tokenizer.decode(this.tokens.slice(this.prefix, this.read), opts);
    const after = this.tokenizer.decode(this.tokens.slice(this.prefix), opts);
    if (after.length <= before.length || after.endsWith("\uFFFD")) return undefined;
    const from = Math.max(0, this.text.length - this.longest + 1);
    this.text += after.slice(before.length);
    this.read = this.tokens.length;
    this.prefix = Math.max(0, this.read - CONTEXT_TOKENS);
    return firstStop(this.text, this.stop, from)?.stop;
  }
}

/** The earliest occurrence at or after `from` of any stop string (longest wins a tie). */
export function firstStop(text: string, stop: readonly string[], from = 0): { index: number; stop: string } | undefined {
  let best: { index: number; stop: string } | undefined;
  for (const s of stop) {
    const i = text.indexOf(s, from);
    if (i >= 0 && (!best || i < best.index || (i === best.index && s.length > best.stop.length))) best = { index: i, stop: s };
  }
  return best;
}
