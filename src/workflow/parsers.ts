// Parser helpers for role outputs: XML-like tags (one, or several sections at once), search-or-end
// actions, JSON string lists and \boxed{} answers. Every parser is total: it returns a ParseResult and never throws.

import { MasoError } from "../errors.js";
import type { ParseResult, Parser } from "./role.js";

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

/** Longest input the parsers look at; longer text is a format failure (no quadratic surprises). */
export const MAX_PARSE_CHARS = 200_000;

function checkTagName(tag: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(tag)) {
    throw new MasoError("PARSER_INVALID", `invalid tag name "${tag}"`, "use letters, digits, _ . - (e.g. final_answer)");
  }
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");

interface TagBlock {
  /** Content between the tags, untrimmed. */
  content: string;
  /** False when the text ended before the closing tag. */
  closed: boolean;
}

/** Finds all `<tag>…</tag>` blocks in order (case-insensitive); an unclosed last block is reported as such. */
function tagFinder(tag: string): (text: string) => TagBlock[] {
  const open = new RegExp(`<\\s*${escapeRe(tag)}\\s*>`, "gi");
  const close = new RegExp(`<\\s*/\\s*${escapeRe(tag)}\\s*>`, "gi");
  return (text) => findTagBlocks(text, open, close);
}

function findTagBlocks(text: string, open: RegExp, close: RegExp): TagBlock[] {
  open.lastIndex = 0;
  const blocks: TagBlock[] = [];
  for (let m = open.exec(text); m !== null; m = open.exec(text)) {
    const start = m.index + m[0].length;
    close.lastIndex = start;
    const c = close.exec(text);
    if (c === null) {
      blocks.push({ content: text.slice(start), closed: false });
      break;
    }
    blocks.push({ content: text.slice(start, c.index), closed: true });
    open.lastIndex = c.index + c[0].length;
  }
  return blocks;
}

export interface TagParserOptions {
  /** Accept a final `<tag>…` without its closing tag (when the closing tag is a stop string). Default false. */
  acceptUnclosed?: boolean;
  /** Longest accepted content after trimming (default unlimited). */
  maxLength?: number;
}

/**
 * Parses the content of ONE tag: the last `<tag>…</tag>` block, trimmed and non-empty; anything
 * outside it (other tags included) is ignored. For an output with several tagged sections
 * (`<SOLUTION>…</SOLUTION><ANSWER>…</ANSWER>`) use tagsParser.
 *
 * @example
 * tagParser("final_answer")("so <final_answer> Paris </final_answer>"); // { ok: true, value: "Paris" }
 */
export function tagParser(tag: string, options: TagParserOptions = {}): Parser<string> {
  checkTagName(tag);
  const find = tagFinder(tag);
  const maxLength = options.maxLength ?? Number.POSITIVE_INFINITY;
  return (text) => {
    if (typeof text !== "string") return fail("output is not a string");
    if (text.length > MAX_PARSE_CHARS) return fail(`output longer than ${MAX_PARSE_CHARS} characters`);
    const blocks = find(text).filter((b) => b.closed || options.acceptUnclosed === true);
    const last = blocks[blocks.length - 1];
    if (last === undefined) return fail(`no <${tag}>…</${tag}> block`);
    const value = last.content.trim();
    if (value === "") return fail(`empty <${tag}> block`);
    if (value.length > maxLength) return fail(`<${tag}> content longer than ${maxLength} characters`);
    return { ok: true, value };
  };
}

export interface TagsParserOptions<K extends string> {
  /** Tags that may be missing (their key is then absent). Default none: every tag is required. */
  optional?: readonly K[];
  /** Accept a final `<tag>…` without its closing tag (when that closing tag is a stop string). Default false. */
  acceptUnclosed?: boolean;
  /** Longest accepted content of each section after trimming (default unlimited). */
  maxLength?: number;
}

/**
 * Parses several tagged sections at once into an object keyed by tag name: the last
 * `<tag>…</tag>` block of each, trimmed. A missing required tag (all of them are named in the
 * reason), an empty section or an over-long one is a format failure. Tags match case-insensitively.
 *
 * @example
 * const p = tagsParser(["SOLUTION", "ANSWER"]);
 * p("<SOLUTION>3 + 4 = 7</SOLUTION> <ANSWER>7</ANSWER>"); // { ok: true, value: { SOLUTION: "3 + 4 = 7", ANSWER: "7" } }
 * p("<ANSWER>7</ANSWER>");                               // { ok: false, reason: "missing <SOLUTION>…</SOLUTION>" }
 */
export function tagsParser<const K extends string>(tags: readonly K[], options: TagsParserOptions<K> = {}): Parser<Record<K, string>> {
  if (!Array.isArray(tags as unknown) || tags.length === 0)
    throw new MasoError("PARSER_INVALID", "tagsParser needs at least one tag", 'e.g. tagsParser(["SOLUTION", "ANSWER"])');
  const seen = new Set<string>();
  for (const t of tags) {
    checkTagName(t);
    if (seen.has(t.toLowerCase())) throw new MasoError("PARSER_INVALID", `tag "${t}" is listed twice`, "list each tag once");
    seen.add(t.toLowerCase());
  }
  const optional = new Set<string>(options.optional ?? []);
  for (const t of optional)
    if (!tags.includes(t as K))
      throw new MasoError("PARSER_INVALID", `optional tag "${t}" is not one of the tags`, `tags: ${tags.join(", ")}`);
  const finders = tags.map((t) => [t, tagFinder(t)] as const);
  const maxLength = options.maxLength ?? Number.POSITIVE_INFINITY;
  return (text) => {
    if (typeof text !== "string") return fail("output is not a string");
    if (text.length > MAX_PARSE_CHARS) return fail(`output longer than ${MAX_PARSE_CHARS} characters`);
    const value: Partial<Record<K, string>> = {};
    const missing: string[] = [];
    for (const [tag, find] of finders) {
      const last = find(text)
        .filter((b) => b.closed || options.acceptUnclosed === true)
        .at(-1);
      if (last === undefined) {
        if (!optional.has(tag)) missing.push(`<${tag}>…</${tag}>`);
        continue;
      }
      const content = last.content.trim();
      if (content === "") return fail(`empty <${tag}> block`);
      if (content.length > maxLength) return fail(`<${tag}> content longer than ${maxLength} characters`);
      value[tag] = content;
    }
    if (missing.length > 0) return fail(`missing ${missing.join(", ")}`);
    return { ok: true, value: value as Record<K, string> };
  };
}

/** A search agent's action: issue a query, or stop searching. */
export type SearchAction = { action: "search"; query: string } | { action: "end" };

export interface SearchOrEndOptions {
  /** Name of the query tag (default "search"). */
  searchTag?: string;
  /** Name of the stop tag, written `<end>` or `<end/>` (default "end"). */
  endTag?: string;
  /** Longest accepted query (default 512 characters). */
  maxQueryLength?: number;
  /** Accept `<search>q` without `</search>` at the end of the text. Default false. */
  acceptUnclosed?: boolean;
}

/**
 * Parses exactly one `<search>q</search>` or one `<end>`. Both, neither, several queries or an
 * empty query are format failures.
 *
 * @example
 * const p = searchOrEndParser();
 * p("<search>capital of France</search>"); // { ok: true, value: { action: "search", query: "capital of France" } }
 * p("I know enough. <end>");               // { ok: true, value: { action: "end" } }
 */
export function searchOrEndParser(options: SearchOrEndOptions = {}): Parser<SearchAction> {
  const searchTag = options.searchTag ?? "search";
  const endTag = options.endTag ?? "end";
  checkTagName(searchTag);
  checkTagName(endTag);
  const find = tagFinder(searchTag);
  // no two adjacent \s* around an optional "/": that would backtrack quadratically on long spaces
  const endRe = new RegExp(`<\\s*${escapeRe(endTag)}\\s*(?:/\\s*)?>`, "i");
  const maxQueryLength = options.maxQueryLength ?? 512;
  return (text) => {
    if (typeof text !== "string") return fail("output is not a string");
    if (text.length > MAX_PARSE_CHARS) return fail(`output longer than ${MAX_PARSE_CHARS} characters`);
    const blocks = find(text).filter((b) => b.closed || options.acceptUnclosed === true);
    const hasEnd = endRe.test(text);
    if (blocks.length > 0 && hasEnd) return fail(`both <${searchTag}> and <${endTag}>`);
    if (hasEnd) return { ok: true, value: { action: "end" } };
    if (blocks.length === 0) return fail(`neither <${searchTag}>…</${searchTag}> nor <${endTag}>`);
    if (blocks.length > 1) return fail(`${blocks.length} <${searchTag}> blocks; expected one`);
    const query = blocks[0].content.trim();
    if (query === "") return fail(`empty <${searchTag}> query`);
    if (query.length > maxQueryLength) return fail(`query longer than ${maxQueryLength} characters`);
    return { ok: true, value: { action: "search", query } };
  };
}

export interface JsonListOptions {
  /** Fewest items (default 1). */
  minItems?: number;
  /** Most items (default unlimited). */
  maxItems?: number;
  /** Longest item after trimming (default unlimited). */
  maxItemLength?: number;
}

/** How many `[` positions the prose scan, and how many code fences, are tried before giving up. */
const MAX_BRACKET_CANDIDATES = 32;
const MAX_FENCES = 16;

/** Contents of ``` fenced blocks, in order (the info string after the opening fence is dropped). */
function fencedBlocks(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  while (out.length < MAX_FENCES) {
    const open = text.indexOf("```", at);
    if (open < 0) break;
    const close = text.indexOf("```", open + 3);
    if (close < 0) break;
    const body = text.slice(open + 3, close);
    const nl = body.indexOf("\n");
    const info = nl < 0 ? "" : body.slice(0, nl);
    out.push(/^[A-Za-z0-9_+-]*\s*$/.test(info) ? body.slice(nl + 1) : body);
    at = close + 3;
  }
  return out;
}

/** End index (exclusive) of the JSON array starting at `start`, string-aware; -1 when unbalanced. */
function matchBracket(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "[") depth++;
    else if (ch === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function tryJson(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

/** The first JSON array found in fenced blocks, the whole text, or a `[…]` span in prose. */
function findJsonArray(text: string): unknown[] | undefined {
  for (const candidate of [...fencedBlocks(text), text]) {
    const r = tryJson(candidate.trim());
    if (r.ok && Array.isArray(r.value)) return r.value;
  }
  let tried = 0;
  for (let i = text.indexOf("["); i >= 0 && tried < MAX_BRACKET_CANDIDATES; i = text.indexOf("[", i + 1)) {
    // in prose, only spans that can be a list of strings: `[` then `"` or `]`
    let k = i + 1;
    while (k < text.length && /\s/.test(text[k])) k++;
    if (text[k] !== '"' && text[k] !== "]") continue;
    tried++;
    const end = matchBracket(text, i);
    if (end < 0) continue;
    const r = tryJson(text.slice(i, end));
    if (r.ok && Array.isArray(r.value)) return r.value;
  }
  return undefined;
}

/**
 * Parses a JSON list of strings, found in a code fence, as the whole output, or inside prose.
 * Items are trimmed; empty, non-string or over-long items and a wrong count are format failures.
 *
 * @example
 * const p = jsonStringListParser({ minItems: 1, maxItems: 3, maxItemLength: 200 });
 * p('Sub-queries:\n```json\n["who wrote Hamlet", "when"]\n```'); // { ok: true, value: ["who wrote Hamlet", "when"] }
 */
export function jsonStringListParser(options: JsonListOptions = {}): Parser<string[]> {
  const minItems = options.minItems ?? 1;
  const maxItems = options.maxItems ?? Number.POSITIVE_INFINITY;
  const maxItemLength = options.maxItemLength ?? Number.POSITIVE_INFINITY;
  if (!(Number.isInteger(minItems) && minItems >= 0 && maxItems >= minItems)) {
    throw new MasoError("PARSER_INVALID", `bad item bounds: minItems ${minItems}, maxItems ${maxItems}`, "need 0 <= minItems <= maxItems");
  }
  return (text): ParseResult<string[]> => {
    if (typeof text !== "string") return fail("output is not a string");
    if (text.length > MAX_PARSE_CHARS) return fail(`output longer than ${MAX_PARSE_CHARS} characters`);
    const list = findJsonArray(text);
    if (list === undefined) return fail("no JSON list found");
    const items: string[] = [];
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      if (typeof item !== "string") return fail(`item ${i} is not a string`);
      const t = item.trim();
      if (t === "") return fail(`item ${i} is empty`);
      if (t.length > maxItemLength) return fail(`item ${i} longer than ${maxItemLength} characters`);
      items.push(t);
    }
    if (items.length < minItems) return fail(`${items.length} items; expected at least ${minItems}`);
    if (items.length > maxItems) return fail(`${items.length} items; expected at most ${maxItems}`);
    return { ok: true, value: items };
  };
}

/**
 * Parses the content of the last `\boxed{…}`, with nested braces (`\{` and `\}` are literal).
 *
 * @example
 * boxedParser()("so x = \\boxed{\\frac{1}{2}}"); // { ok: true, value: "\\frac{1}{2}" }
 */
export function boxedParser(): Parser<string> {
  return (text) => {
    if (typeof text !== "string") return fail("output is not a string");
    if (text.length > MAX_PARSE_CHARS) return fail(`output longer than ${MAX_PARSE_CHARS} characters`);
    const at = text.lastIndexOf("\\boxed");
    if (at < 0) return fail("no \\boxed{…}");
    let i = at + "\\boxed".length;
    while (i < text.length && /\s/.test(text[i])) i++;
    if (text[i] !== "{") return fail("\\boxed not followed by {");
    const start = i + 1;
    let depth = 1;
    for (i = start; i < text.length; i++) {
      const ch = text[i];
      if (ch === "\\") i++;
      else if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) break;
    }
    if (depth !== 0) return fail("unclosed \\boxed{");
    const value = text.slice(start, i).trim();
    if (value === "") return fail("empty \\boxed{}");
    return { ok: true, value };
  };
}

export interface TextParserOptions {
  /** Longest accepted text after trimming (default unlimited). */
  maxLength?: number;
}

/**
 * Accepts any non-empty text (trimmed), e.g. for a summarizer or a planner.
 *
 * @example
 * textParser({ maxLength: 400 })("  no useful information "); // { ok: true, value: "no useful information" }
 */
export function textParser(options: TextParserOptions = {}): Parser<string> {
  const maxLength = options.maxLength ?? Number.POSITIVE_INFINITY;
  return (text) => {
    if (typeof text !== "string") return fail("output is not a string");
    const value = text.trim();
    if (value === "") return fail("empty output");
    if (value.length > maxLength) return fail(`output longer than ${maxLength} characters`);
    return { ok: true, value };
  };
}
