// The tokenizer contract every part of maso codes against: text <-> ids and chat messages -> prompt.
// Types only; no implementation and no I/O here (see hf-tokenizer.ts, byte-tokenizer.ts).

/** One chat turn, as chat templates expect it (tool fields as transformers passes them). */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** An assistant turn's tool calls; arguments are an object (or the raw string when not JSON). */
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: unknown } }[];
  /** A tool turn: the call it answers. */
  tool_call_id?: string;
}

/** Options for {@link Tokenizer.encode}. */
export interface EncodeOptions {
  /**
   * Add the tokenizer's own framing tokens (BOS/EOS) as its config asks. Default `true`, as in HF.
   * Qwen3 adds nothing; a byte tokenizer adds `<|bos|>` only when created with `addBosToken`.
   * Pass `false` when encoding chat-template output, which already carries its markers.
   */
  addSpecialTokens?: boolean;
  /**
   * Turn special-token strings found in the text (e.g. `"<|im_end|>"`) into their single ids.
   * When `false` they are encoded as ordinary text, so user text cannot inject control tokens.
   * Defaults differ by implementation: HF tokenizers `true` (HF's behaviour), the byte tokenizer
   * `false`. Pass it explicitly when it matters; {@link encodeChat} passes `true`.
   */
  parseSpecialTokens?: boolean;
}

/** Options for {@link Tokenizer.decode}. */
export interface DecodeOptions {
  /** Drop special tokens (BOS, EOS, chat markers) from the text. Default `false`. */
  skipSpecialTokens?: boolean;
}

/** Options for {@link Tokenizer.applyChatTemplate}. */
export interface ChatTemplateOptions {
  /** End the prompt with the opening of an assistant turn, ready for generation. Default `false`. */
  addGenerationPrompt?: boolean;
  /** Qwen3: `false` appends an empty think block so the model answers directly. Unset: template default. */
  enableThinking?: boolean;
  /** Tool (function) schemas, passed to the template as `tools`. */
  tools?: unknown[];
  /**
   * Extra template variables, e.g. `{ enable_thinking: false }` (a role's `chatTemplate`). They
   * cannot replace `messages`, `add_generation_prompt`, `tools` or the special-token strings;
   * `enableThinking`, when set, wins over `enable_thinking` here.
   */
  variables?: Readonly<Record<string, unknown>>;
}

/**
 * Text <-> token ids, plus the chat format of a model.
 *
 * @example
 * const tok = await loadTokenizer(qwen3TokenizerDir());
 * const prompt = tok.applyChatTemplate([{ role: "user", content: "2+2?" }], { addGenerationPrompt: true });
 * const ids = tok.encode(prompt, { addSpecialTokens: false, parseSpecialTokens: true });
 * tok.decode(ids) === prompt; // true
 */
export interface Tokenizer {
  /** Ids are in [0, vocabSize). A model's embedding may have more rows (Qwen3 pads to 151936). */
  readonly vocabSize: number;
  /** Ids that end a generation. */
  readonly eosTokenIds: number[];
  readonly bosTokenId?: number;
  readonly padTokenId?: number;
  encode(text: string, opts?: EncodeOptions): number[];
  /** Throws MasoError `TOKENIZER_BAD_ID` for an id outside [0, vocabSize). */
  decode(ids: readonly number[], opts?: DecodeOptions): string;
  /** The id of a token string (e.g. `"<|im_end|>"`), or undefined if it is not one token. */
  tokenToId(token: string): number | undefined;
  /** At least as many characters as any one token decodes to (from the vocabulary, without decoding it). */
  longestTokenChars?(): number;
  /** messages -> prompt text via the tokenizer's chat template; throws MasoError if the tokenizer has none. */
  applyChatTemplate(messages: ChatMessage[], opts?: ChatTemplateOptions): string;
}
