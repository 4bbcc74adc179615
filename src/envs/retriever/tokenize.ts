// Splits text into index terms exactly as an SQLite FTS5 table with tokenize = 'porter unicode61'
// does, so our BM25 scores match FTS5's. A term is a string of UTF-8 byte values (char codes 0–255):
// the stemmer works on bytes and may cut inside a character, as FTS5's does.

import { PORTER_MAX_BYTES, porterStem } from "./porter.js";
import { CONTINUE_ONLY, FOLD_RUNS, TOKEN_RANGES } from "./unicode61-tables.js";

/** FTS5 keeps at most this many bytes of a term. */
export const MAX_TERM_BYTES = 32768;

const NOT_TOKEN = 0;
const TOKEN = 1;
/** Continues a token but cannot start one (a combining diacritic). */
const CONTINUES = 2;

/** Class of every BMP code point; the planes above are looked up in `wideRanges`. */
const bmpClass = new Uint8Array(0x10000);
const wideRanges: number[] = [];
{
  let at = 0;
  for (const pair of TOKEN_RANGES.split(" ")) {
    const [gap, len] = pair.split(".").map((x) => Number.parseInt(x, 36));
    const start = at + gap;
    at = start + len;
    for (let c = start; c < Math.min(at, 0x10000); c++) bmpClass[c] = TOKEN;
    if (at > 0x10000) wideRanges.push(Math.max(start, 0x10000), at);
  }
  for (const c of CONTINUE_ONLY) bmpClass[c] = CONTINUES;
}

/** Code point → folded code point, or -1 when folding drops it. */
const folds = new Map<number, number>();
{
  let at = 0;
  for (const run of FOLD_RUNS.split(" ")) {
    const [gap, count, step, delta] = run.split(".");
    const start = at + Number.parseInt(gap, 36);
    at = start;
    const d = delta === "x" ? null : Number.parseInt(delta, 36);
    for (let i = 0, c = start; i < Number.parseInt(count, 36); i++, c += Number(step)) folds.set(c, d === null ? -1 : c + d);
  }
}

function classOf(c: number): number {
  if (c < 0x10000) return bmpClass[c];
  let lo = 0;
  let hi = wideRanges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (c < wideRanges[2 * mid]) hi = mid - 1;
    else if (c >= wideRanges[2 * mid + 1]) lo = mid + 1;
    else return TOKEN;
  }
  return NOT_TOKEN;
}

/** Appends code point `c` as UTF-8 byte values. */
function utf8(c: number): string {
  if (c < 0x80) return String.fromCharCode(c);
  if (c < 0x800) return String.fromCharCode(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
  if (c < 0x10000) return String.fromCharCode(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  return String.fromCharCode(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
}

/**
 * The unicode61 tokens of `text` (case folded, diacritics removed), unstemmed. A lone surrogate
 * separates, as the U+FFFD it becomes when the text is encoded as UTF-8.
 */
export function unicode61Tokens(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.codePointAt(i) as number;
    if ((c < 0x80 ? bmpClass[c] : classOf(c)) !== TOKEN) {
      i += c > 0xffff ? 2 : 1;
      continue;
    }
    // most tokens are ASCII: scan them by char code, and fold by slicing
    const start = i;
    while (i < n) {
      const a = text.charCodeAt(i);
      if (a >= 0x80 || bmpClass[a] !== TOKEN) break;
      i++;
    }
    if (i < n && text.charCodeAt(i) >= 0x80) i = wideToken(text, start, out);
    else out.push(fold(text.slice(start, i)));
  }
  return out;
}

/** Reads the token at `start`, which has a non-ASCII character, into `out`; returns where it ends. */
function wideToken(text: string, start: number, out: string[]): number {
  let term = "";
  let i = start;
  while (i < text.length) {
    const c = text.codePointAt(i) as number;
    if (classOf(c) === NOT_TOKEN) break;
    if (c < 0x80) term += fold(text[i]);
    else {
      const f = folds.get(c) ?? c;
      if (f >= 0) term += utf8(f);
    }
    i += c > 0xffff ? 2 : 1;
  }
  out.push(term);
  return i;
}

/** Folds an ASCII run (only A–Z change). */
const fold = (ascii: string): string => ascii.toLowerCase();

/** Stems of recent tokens: a collection repeats few words many times, and stemming costs more than a lookup. */
const stems = new Map<string, string>();
const MAX_CACHED_STEMS = 200_000;

/** The terms FTS5 'porter unicode61' indexes for `text`, in order (one per position). */
export function tokenize(text: string): string[] {
  const tokens = unicode61Tokens(text);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    let t = stems.get(token);
    if (t === undefined) {
      t = porterStem(token);
      if (t.length > MAX_TERM_BYTES) t = t.slice(0, MAX_TERM_BYTES);
      if (stems.size >= MAX_CACHED_STEMS) stems.clear();
      if (token.length <= PORTER_MAX_BYTES) stems.set(token, t);
    }
    tokens[i] = t;
  }
  return tokens;
}
