// A byte-level tokenizer for the small models maso trains from scratch: ids 0..255 are UTF-8 bytes,
// then special tokens. It needs no files, and it must stay in step with BYTE_SPECIAL_TOKENS' ids.

import { MasoError } from "../../errors.js";
import type { ChatMessage, ChatTemplateOptions, DecodeOptions, EncodeOptions, Tokenizer } from "./types.js";

/**
 * The standard special tokens, in id order from 256. With no extras the vocabulary is 264 ids:
 * 0..255 bytes, 256 `<|bos|>`, 257 `<|eos|>`, 258 `<|pad|>`, 259 `<|system|>`, 260 `<|user|>`,
 * 261 `<|assistant|>`, 262 `<|tool|>`, 263 `<|end|>`.
 */
export const BYTE_SPECIAL_TOKENS = [
  "<|bos|>",
  "<|eos|>",
  "<|pad|>",
  "<|system|>",
  "<|user|>",
  "<|assistant|>",
  "<|tool|>",
  "<|end|>",
] as const;

/** Vocabulary size of a byte tokenizer without extra special tokens. */
export const BYTE_VOCAB_SIZE = 256 + BYTE_SPECIAL_TOKENS.length;

/** The serialised form, written as a model directory's `tokenizer.json`. */
export interface ByteTokenizerJson {
  type: "maso-byte";
  version: 1;
  /** All special tokens in id order from 256: BYTE_SPECIAL_TOKENS, then any extras. */
  specialTokens: string[];
  /** Whether `encode` with `addSpecialTokens` (the default) prepends `<|bos|>`. */
  addBosToken: boolean;
}

/** Options for {@link createByteTokenizer}. */
export interface ByteTokenizerOptions {
  /** More special tokens, given ids from 264 on. */
  extraSpecialTokens?: string[];
  /** Prepend `<|bos|>` when encoding with `addSpecialTokens` (default false, like Qwen). */
  addBosToken?: boolean;
}

/** A byte-level tokenizer; `toJSON()` gives what {@link byteTokenizerFromJson} reads back. */
export interface ByteTokenizer extends Tokenizer {
  readonly kind: "maso-byte";
  readonly bosTokenId: number;
  readonly padTokenId: number;
  /** The special tokens in id order from 256. */
  readonly specialTokens: readonly string[];
  toJSON(): ByteTokenizerJson;
}

const ROLE_MARKERS: Record<ChatMessage["role"], string> = {
  system: "<|system|>",
  user: "<|user|>",
  assistant: "<|assistant|>",
  tool: "<|tool|>",
};

/**
 * Creates a byte-level tokenizer. Its chat format is `<|role|>content<|end|>` per message, and the
 * generation prompt is `<|assistant|>`; generation ends at `<|end|>` or `<|eos|>`.
 *
 * @example
 * const tok = createByteTokenizer();
 * tok.encode("hé");                      // [104, 195, 169]
 * tok.applyChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true });
 * // "<|user|>hi<|end|><|assistant|>"
 */
export function createByteTokenizer(opts: ByteTokenizerOptions = {}): ByteTokenizer {
  return buildByteTokenizer([...BYTE_SPECIAL_TOKENS, ...(opts.extraSpecialTokens ?? [])], opts.addBosToken ?? false);
}

/**
 * Rebuilds a byte tokenizer from its `toJSON()` form; throws MasoError `TOKENIZER_BAD_FILE` when
 * the description is not one this version can read.
 */
export function byteTokenizerFromJson(json: unknown): ByteTokenizer {
  const j = json as Partial<ByteTokenizerJson> | null;
  const bad = (why: string) =>
    new MasoError(
      "TOKENIZER_BAD_FILE",
      `not a maso byte tokenizer description: ${why}`,
      "rewrite it with saveTokenizer(dir, createByteTokenizer())",
    );
  if (j === null || typeof j !== "object" || j.type !== "maso-byte") throw bad('"type" must be "maso-byte"');
  if (j.version !== 1) throw bad(`unsupported version ${String(j.version)}`);
  if (!Array.isArray(j.specialTokens) || !j.specialTokens.every((t) => typeof t === "string"))
    throw bad('"specialTokens" must be a string list');
  if (!BYTE_SPECIAL_TOKENS.every((t, i) => j.specialTokens?.[i] === t))
    throw bad(`"specialTokens" must start with ${BYTE_SPECIAL_TOKENS.join(" ")}`);
  if (typeof j.addBosToken !== "boolean") throw bad('"addBosToken" must be a boolean');
  return buildByteTokenizer(j.specialTokens, j.addBosToken);
}

function buildByteTokenizer(specialTokens: string[], addBosToken: boolean): ByteTokenizer {
  const specialIds = new Map<string, number>();
  for (const [i, t] of specialTokens.entries()) {
    if (t.length === 0 || specialIds.has(t)) {
      throw new MasoError(
        "TOKENIZER_BAD_SPECIAL",
        `special token ${JSON.stringify(t)} is empty or repeated`,
        "give each special token once",
      );
    }
    specialIds.set(t, 256 + i);
  }
  const id = (t: string) => specialIds.get(t)!;
  const vocabSize = 256 + specialTokens.length;
  const bosTokenId = id("<|bos|>");
  // Longest first, so a special token that contains another one wins.
  const splitter = new RegExp(
    [...specialTokens]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join("|"),
    "g",
  );
  const utf8 = new TextEncoder();
  // ignoreBOM keeps a leading U+FEFF instead of silently dropping it.
  const utf8Decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

  const encodeText = (text: string, out: number[]) => {
    for (const b of utf8.encode(text)) out.push(b);
  };

  return {
    kind: "maso-byte",
    vocabSize,
    eosTokenIds: [id("<|eos|>"), id("<|end|>")],
    bosTokenId,
    padTokenId: id("<|pad|>"),
    specialTokens: [...specialTokens],

    encode(text: string, opts: EncodeOptions = {}): number[] {
      const out: number[] = [];
      if (addBosToken && (opts.addSpecialTokens ?? true)) out.push(bosTokenId);
      if (!opts.parseSpecialTokens) {
        encodeText(text, out);
        return out;
      }
      let last = 0;
      for (const m of text.matchAll(splitter)) {
        encodeText(text.slice(last, m.index), out);
        out.push(id(m[0]));
        last = m.index! + m[0].length;
      }
      encodeText(text.slice(last), out);
      return out;
    },

    decode(ids: readonly number[], opts: DecodeOptions = {}): string {
      // Bytes between special tokens decode together; invalid UTF-8 (a sequence cut mid-character)
      // becomes U+FFFD instead of throwing.
      let text = "";
      let bytes: number[] = [];
      const flush = () => {
        if (bytes.length > 0) text += utf8Decoder.decode(Uint8Array.from(bytes));
        bytes = [];
      };
      for (const t of ids) {
        if (!Number.isInteger(t) || t < 0 || t >= vocabSize) {
          throw new MasoError("TOKENIZER_BAD_ID", `token id ${t} is outside [0, ${vocabSize})`, "decode only ids this tokenizer produced");
        }
        if (t < 256) {
          bytes.push(t);
          continue;
        }
        flush();
        if (!opts.skipSpecialTokens) text += specialTokens[t - 256];
      }
      flush();
      return text;
    },

    tokenToId(token: string): number | undefined {
      const special = specialIds.get(token);
      if (special !== undefined) return special;
      const bytes = utf8.encode(token);
      return bytes.length === 1 ? bytes[0] : undefined;
    },

    applyChatTemplate(messages: ChatMessage[], opts: ChatTemplateOptions = {}): string {
      if ((opts.tools !== undefined && opts.tools.length > 0) || messages.some((m) => (m.tool_calls?.length ?? 0) > 0)) {
        throw new MasoError(
          "TOKENIZER_NO_TOOLS",
          "the byte tokenizer's chat format has no tool schema section",
          "describe tools in the system message, or run tools as workflow nodes",
        );
      }
      let prompt = "";
      for (const m of messages) {
        const marker = ROLE_MARKERS[m.role];
        if (marker === undefined) {
          throw new MasoError("TOKENIZER_BAD_ROLE", `unknown chat role ${JSON.stringify(m.role)}`, "use system, user, assistant or tool");
        }
        prompt += marker + m.content + "<|end|>";
      }
      return opts.addGenerationPrompt ? prompt + "<|assistant|>" : prompt;
    },

    toJSON(): ByteTokenizerJson {
      return { type: "maso-byte", version: 1, specialTokens: [...specialTokens], addBosToken };
    },
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
