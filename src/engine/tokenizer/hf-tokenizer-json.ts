// Checks the shape of an HF tokenizer.json before @lenml/tokenizers sees it, so a malformed file
// fails with a MasoError naming the key and the file instead of a TypeError from inside the library.
// Shape only: it never builds a tokenizer and never judges whether the vocabulary is any good.

import { MasoError } from "../../errors.js";

type Json = Record<string, unknown>;

/** Ids beyond this are not a vocabulary but a corrupt file (the largest real ones are ~262k). */
export const MAX_TOKEN_ID = 2 ** 24 - 1;

/** One entry of tokenizer.json's `added_tokens`. */
export interface AddedTokenJson {
  id: number;
  content: string;
  special?: boolean;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const isId = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_TOKEN_ID;
const show = (v: unknown): string =>
  Array.isArray(v) ? "a list" : v === null ? "null" : typeof v === "object" ? "an object" : JSON.stringify(v);

function bad(where: string, key: string, what: string): MasoError {
  return new MasoError(
    "TOKENIZER_BAD_FILE",
    `${where}: ${key} ${what}`,
    "the file must be an HF fast-tokenizer tokenizer.json (as saved by tokenizers / transformers); re-save it from the original model",
  );
}

function checkVocab(model: Json, where: string): void {
  const vocab = model.vocab;
  if (vocab === undefined) throw bad(where, '"model.vocab"', "is missing");
  if (model.type === "Unigram" || Array.isArray(vocab)) {
    if (!Array.isArray(vocab))
      throw bad(where, '"model.vocab"', `must be a list of [token, score] pairs for a Unigram model, got ${show(vocab)}`);
    vocab.forEach((e, i) => {
      if (!Array.isArray(e) || typeof e[0] !== "string" || typeof e[1] !== "number")
        throw bad(where, `"model.vocab[${i}]"`, `must be a [token, score] pair, got ${show(e)}`);
    });
    return;
  }
  if (!isObject(vocab)) throw bad(where, '"model.vocab"', `must be an object of token -> id, got ${show(vocab)}`);
  for (const [token, id] of Object.entries(vocab))
    if (!isId(id))
      throw bad(where, `"model.vocab" entry ${JSON.stringify(token)}`, `must be an integer id in [0, ${MAX_TOKEN_ID}], got ${show(id)}`);
}

function checkMerges(model: Json, where: string): void {
  const merges = model.merges;
  if (merges === undefined) throw bad(where, '"model.merges"', "is missing (a BPE model needs its merges)");
  if (!Array.isArray(merges)) throw bad(where, '"model.merges"', `must be a list, got ${show(merges)}`);
  merges.forEach((m, i) => {
    const ok = typeof m === "string" || (Array.isArray(m) && m.length === 2 && typeof m[0] === "string" && typeof m[1] === "string");
    if (!ok) throw bad(where, `"model.merges[${i}]"`, `must be "a b" or ["a", "b"], got ${show(m)}`);
  });
}

/**
 * Checks a parsed tokenizer.json and returns it with `added_tokens` defaulted to [] and absent
 * pipeline parts (normalizer, pre_tokenizer, post_processor, decoder) to null, as the library
 * needs them. `where` is the file's path, named in every error.
 * Errors: TOKENIZER_BAD_FILE naming the missing or mistyped key.
 *
 * @example
 * const json = checkTokenizerJson(JSON.parse(text), "models/qwen/tokenizer.json");
 */
export function checkTokenizerJson(json: Json, where: string): Json & { added_tokens: AddedTokenJson[] } {
  const parts: Json = {};
  const model = json.model;
  if (model === undefined) throw bad(where, '"model"', "is missing");
  if (!isObject(model)) throw bad(where, '"model"', `must be an object, got ${show(model)}`);
  if (model.type !== undefined && typeof model.type !== "string")
    throw bad(where, '"model.type"', `must be a string, got ${show(model.type)}`);
  checkVocab(model, where);
  if (model.type === "BPE") checkMerges(model, where);
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) throw bad(where, '"added_tokens"', `must be a list, got ${show(added)}`);
  added.forEach((t, i) => {
    if (!isObject(t)) throw bad(where, `"added_tokens[${i}]"`, `must be an object, got ${show(t)}`);
    if (!isId(t.id)) throw bad(where, `"added_tokens[${i}].id"`, `must be an integer id in [0, ${MAX_TOKEN_ID}], got ${show(t.id)}`);
    if (typeof t.content !== "string" || t.content === "")
      throw bad(where, `"added_tokens[${i}].content"`, `must be a non-empty string, got ${show(t.content)}`);
  });
  for (const part of ["normalizer", "pre_tokenizer", "post_processor", "decoder"]) {
    const v = json[part];
    parts[part] = v ?? null;
    if (v === undefined || v === null) continue;
    if (!isObject(v)) throw bad(where, `"${part}"`, `must be an object or null, got ${show(v)}`);
    if (typeof v.type !== "string")
      throw bad(where, `"${part}.type"`, v.type === undefined ? "is missing" : `must be a string, got ${show(v.type)}`);
  }
  return { ...json, ...parts, added_tokens: added as AddedTokenJson[] };
}
