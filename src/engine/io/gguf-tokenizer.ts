// GGUF tokenizer metadata (tokenizer.ggml.*) for maso's byte tokenizer and for HF byte-level BPE
// tokenizers, so llama.cpp tokenises, detokenises and applies the chat template as maso does. It
// describes tokenizers only; it never touches weights, and refuses tokenizers it cannot map.
import { MasoError } from "../../errors.js";
import type { ByteTokenizer } from "../tokenizer/byte-tokenizer.js";
import type { HfTokenizer } from "../tokenizer/hf-tokenizer.js";
import { BYTE_CHAT_TEMPLATE } from "../tokenizer/tokenizer-files.js";
import type { Tokenizer } from "../tokenizer/types.js";
import type { GgufValue } from "./gguf-writer.js";

/** llama.cpp token types (llama_token_type). */
const TOKEN_TYPE = { NORMAL: 1, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5 } as const;

/** GPT-2's reversible map from bytes to printable characters (byte-level BPE's alphabet). */
export function byteLevelAlphabet(): string[] {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const out = new Array<string>(256);
  for (const b of bs) out[b] = String.fromCodePoint(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (out[b] === undefined) out[b] = String.fromCodePoint(256 + n++);
  return out;
}

export interface GgufTokenizerOptions {
  /** Rows of the model's embedding; ids beyond the tokenizer become unused `[PAD<id>]` tokens. */
  vocabSize: number;
  /**
   * llama.cpp pre-tokenizer name (tokenizer.ggml.pre) for HF tokenizers, e.g. "qwen2", "llama-bpe".
   * Default: the one whose split pattern tokenizer.json uses ({@link llamaCppPreTokenizer}), else `fallbackPre`.
   */
  pre?: string;
  /** Used when `pre` is unset and the split pattern is not one llama.cpp names (else GGUF_TOKENIZER). */
  fallbackPre?: string;
}

/** Qwen2's split pattern, also maso's trained BPE's (BPE_SPLIT_PATTERN): single digits. */
const QWEN2_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** Llama 3's: the same with digits in runs of up to three. */
const LLAMA3_SPLIT = QWEN2_SPLIT.replace("\\p{N}|", "\\p{N}{1,3}|");

/**
 * The llama.cpp pre-tokenizer that splits text as tokenizer.json's pre_tokenizer does: "qwen2" or
 * "llama-bpe" for those models' Split regexes, "gpt-2" for a plain ByteLevel pre-tokenizer with
 * GPT-2's built-in regex; undefined for anything else.
 */
export function llamaCppPreTokenizer(preTokenizer: unknown): string | undefined {
  const p = preTokenizer as
    | { type?: string; use_regex?: boolean; add_prefix_space?: boolean; pretokenizers?: unknown[] }
    | null
    | undefined;
  if (p?.type === "ByteLevel") return p.use_regex === false || p.add_prefix_space === true ? undefined : "gpt-2";
  if (p?.type !== "Sequence" || !Array.isArray(p.pretokenizers)) return undefined;
  const parts = p.pretokenizers as { type?: string; pattern?: { Regex?: string }; use_regex?: boolean }[];
  const split = parts.filter((x) => x.type === "Split");
  const byteLevel = parts.find((x) => x.type === "ByteLevel");
  if (split.length !== 1 || !byteLevel || byteLevel.use_regex !== false) return undefined;
  const regex = split[0].pattern?.Regex;
  if (regex === QWEN2_SPLIT) return "qwen2";
  if (regex === LLAMA3_SPLIT) return "llama-bpe";
  return undefined;
}

/** tokenizer.* metadata entries for `tokenizer`, in writing order. */
export function tokenizerMetadata(tokenizer: Tokenizer, opts: GgufTokenizerOptions): Map<string, GgufValue> {
  const kind = (tokenizer as { kind?: string }).kind;
  if (kind === "maso-byte") return byteMetadata(tokenizer as ByteTokenizer, opts);
  if (kind === "hf") return hfMetadata(tokenizer as HfTokenizer, opts);
  throw new MasoError("GGUF_TOKENIZER", "only maso byte tokenizers and HF tokenizers can be written to GGUF", "export without a tokenizer");
}

function padded(tokens: string[], types: number[], V: number): void {
  if (tokens.length > V) {
    throw new MasoError("GGUF_TOKENIZER", `the tokenizer has ${tokens.length} ids, the model only ${V}`, "use the model's own tokenizer");
  }
  for (let id = 0; id < V; id++) {
    if (tokens[id] === undefined) {
      tokens[id] = `[PAD${id}]`;
      types[id] = TOKEN_TYPE.UNUSED;
    }
  }
}

function common(m: Map<string, GgufValue>, tokenizer: Tokenizer, addBos: boolean, template: string | undefined): void {
  if (tokenizer.bosTokenId !== undefined) m.set("tokenizer.ggml.bos_token_id", { type: "u32", value: tokenizer.bosTokenId });
  const [eos, eot] = tokenizer.eosTokenIds;
  if (eos !== undefined) m.set("tokenizer.ggml.eos_token_id", { type: "u32", value: eos });
  if (eot !== undefined) m.set("tokenizer.ggml.eot_token_id", { type: "u32", value: eot });
  if (tokenizer.padTokenId !== undefined) m.set("tokenizer.ggml.padding_token_id", { type: "u32", value: tokenizer.padTokenId });
  m.set("tokenizer.ggml.add_bos_token", { type: "bool", value: addBos });
  m.set("tokenizer.ggml.add_eos_token", { type: "bool", value: false });
  if (template !== undefined) m.set("tokenizer.chat_template", { type: "string", value: template });
}

// Bytes become GPT-2's byte-level characters and there are no merges, so llama.cpp's BPE yields
// exactly one token per byte, like maso's byte tokenizer.
function byteMetadata(tok: ByteTokenizer, opts: GgufTokenizerOptions): Map<string, GgufValue> {
  const tokens = byteLevelAlphabet();
  const types: number[] = tokens.map(() => TOKEN_TYPE.NORMAL);
  tok.specialTokens.forEach((s, i) => {
    tokens[256 + i] = s;
    types[256 + i] = TOKEN_TYPE.CONTROL;
  });
  padded(tokens, types, opts.vocabSize);
  const m = new Map<string, GgufValue>();
  m.set("tokenizer.ggml.model", { type: "string", value: "gpt2" });
  m.set("tokenizer.ggml.pre", { type: "string", value: "default" });
  m.set("tokenizer.ggml.tokens", { type: "string[]", value: tokens });
  m.set("tokenizer.ggml.token_type", { type: "i32[]", value: types });
  m.set("tokenizer.ggml.merges", { type: "string[]", value: [] });
  common(m, tok, tok.toJSON().addBosToken, BYTE_CHAT_TEMPLATE);
  return m;
}

interface TokenizerJson {
  model?: { type?: string; vocab?: Record<string, number>; merges?: (string | [string, string])[] };
  added_tokens?: { id: number; content: string; special?: boolean }[];
  pre_tokenizer?: unknown;
  decoder?: unknown;
}

function hfMetadata(tok: HfTokenizer, opts: GgufTokenizerOptions): Map<string, GgufValue> {
  const json = JSON.parse(tok.sourceFiles["tokenizer.json"] ?? "{}") as TokenizerJson;
  const model = json.model;
  const byteLevel =
    JSON.stringify(json.pre_tokenizer ?? "").includes("ByteLevel") || JSON.stringify(json.decoder ?? "").includes("ByteLevel");
  if (model?.type !== "BPE" || !model.vocab || !byteLevel) {
    throw new MasoError(
      "GGUF_TOKENIZER",
      `tokenizer.json has a ${model?.type ?? "missing"} model${byteLevel ? "" : " without byte-level pre-tokenisation"}; only byte-level BPE maps to GGUF here`,
      "export without a tokenizer and convert it with llama.cpp's own script",
    );
  }
  const tokens: string[] = [];
  const types: number[] = [];
  for (const [t, id] of Object.entries(model.vocab)) {
    tokens[id] = t;
    types[id] = TOKEN_TYPE.NORMAL;
  }
  for (const a of json.added_tokens ?? []) {
    tokens[a.id] = a.content;
    types[a.id] = a.special ? TOKEN_TYPE.CONTROL : TOKEN_TYPE.USER_DEFINED;
  }
  padded(tokens, types, opts.vocabSize);
  const merges = (model.merges ?? []).map((x) => (typeof x === "string" ? x : `${x[0]} ${x[1]}`));
  const config = JSON.parse(tok.sourceFiles["tokenizer_config.json"] ?? "{}") as { add_bos_token?: boolean; chat_template?: unknown };
  const m = new Map<string, GgufValue>();
  m.set("tokenizer.ggml.model", { type: "string", value: "gpt2" });
  const pre = opts.pre ?? llamaCppPreTokenizer(json.pre_tokenizer) ?? opts.fallbackPre;
  if (pre === undefined) {
    throw new MasoError(
      "GGUF_TOKENIZER",
      "tokenizer.json splits text with a pattern llama.cpp has no name for",
      "pass the llama.cpp pre-tokenizer name (writeGguf's `pre` option)",
    );
  }
  m.set("tokenizer.ggml.pre", { type: "string", value: pre });
  m.set("tokenizer.ggml.tokens", { type: "string[]", value: tokens });
  m.set("tokenizer.ggml.token_type", { type: "i32[]", value: types });
  m.set("tokenizer.ggml.merges", { type: "string[]", value: merges });
  common(m, tok, config.add_bos_token === true, chatTemplate(tok, config.chat_template));
  return m;
}

function chatTemplate(tok: HfTokenizer, fromConfig: unknown): string | undefined {
  const file = tok.sourceFiles["chat_template.jinja"];
  if (file !== undefined) return file;
  const json = tok.sourceFiles["chat_template.json"];
  if (json !== undefined) {
    const t = (JSON.parse(json) as { chat_template?: unknown }).chat_template;
    if (typeof t === "string") return t;
  }
  if (typeof fromConfig === "string") return fromConfig;
  if (Array.isArray(fromConfig)) {
    const def = fromConfig.find((x: { name?: string }) => x.name === "default") as { template?: string } | undefined;
    return def?.template;
  }
  return undefined;
}
