// Splits text into index terms exactly as an SQLite FTS5 table with tokenize = 'porter unicode61'
// does, so our BM25 scores match FTS5's. A term is a string of UTF-8 byte values (char codes 0–255):
// the stemmer works on bytes and may cut inside a character, as FTS5's does.

import { porterStem } from "./porter.js";
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
    let c = text.codePointAt(i) as number;
    if (classOf(c) !== TOKEN) {
      i += c > 0xffff ? 2 : 1;
      continue;
    }
    const start = i;
    let ascii = true;
    let term = "";
    while (i < n) {
      c = text.codePointAt(i) as number;
      const cls = classOf(c);
      if (cls === NOT_TOKEN) break;
      const width = c > 0xffff ? 2 : 1;
      if (c >= 0x80 && ascii) {
        ascii = false;
        term = fold(text.slice(start, i));
      }
      if (!ascii) {
        const f = folds.get(c) ?? c;
        if (f >= 0) term += utf8(f);
      }
      i += width;
    }
    out.push(ascii ? fold(text.slice(start, i)) : term);
  }
  return out;
}

/** Folds an ASCII run (only A–Z change). */
const fold = (ascii: string): string => ascii.toLowerCase();

/** The terms FTS5 'porter unicode61' indexes for `text`, in order (one per position). */
export function tokenize(text: string): string[] {
  const tokens = unicode61Tokens(text);
  for (let i = 0; i < tokens.length; i++) {
    const t = porterStem(tokens[i]);
    tokens[i] = t.length > MAX_TERM_BYTES ? t.slice(0, MAX_TERM_BYTES) : t;
  }
  return tokens;
}
