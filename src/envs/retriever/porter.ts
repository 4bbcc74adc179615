// The Porter stemmer exactly as SQLite FTS5's `porter` tokenizer applies it, so our index stems as
// an FTS5 'porter unicode61' table does. It works on the token's UTF-8 bytes (a string of char
// codes 0–255): a non-ASCII byte counts as a consonant, and only tokens of 3–64 bytes are stemmed.

/** Tokens longer than this many bytes pass through unstemmed (FTS5's limit). */
export const PORTER_MAX_BYTES = 64;

const isVowel = (c: string, yIsVowel: boolean): boolean =>
  c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || (yIsVowel && c === "y");

/** Past the first vowel-then-consonant run of `w[from, to)`: the index after it, or 0 when there is none. */
function gobbleVC(w: string, from: number, to: number, prevCons: boolean): number {
  let cons = prevCons;
  let i = from;
  for (; i < to; i++) if (!(cons = !isVowel(w[i], cons))) break;
  for (i++; i < to; i++) if ((cons = !isVowel(w[i], cons))) return i + 1;
  return 0;
}

/** Measure m of the stem `w[0, n)` is > 0. */
const mGt0 = (w: string, n: number): boolean => gobbleVC(w, 0, n, false) !== 0;

/** m > 1. */
function mGt1(w: string, n: number): boolean {
  const at = gobbleVC(w, 0, n, false);
  return at !== 0 && gobbleVC(w, at, n, true) !== 0;
}

/** m = 1. */
function mEq1(w: string, n: number): boolean {
  const at = gobbleVC(w, 0, n, false);
  return at !== 0 && gobbleVC(w, at, n, true) === 0;
}

/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
function oStar(w: string, n: number): boolean {
  const last = w[n - 1];
  if (last === "w" || last === "x" || last === "y") return false;
  let mask = 0;
  let cons = false;
  for (let i = 0; i < n; i++) {
    cons = !isVowel(w[i], cons);
    mask = ((mask << 1) | (cons ? 1 : 0)) & 7;
  }
  return mask === 5;
}

/** *v*: the stem has a vowel (FTS5 counts y as one anywhere but first). */
function hasVowel(w: string, n: number): boolean {
  for (let i = 0; i < n; i++) if (isVowel(w[i], i > 0)) return true;
  return false;
}

const endsS = (w: string, n: number) => (w[n - 1] === "s" || w[n - 1] === "t") && mGt1(w, n);

type Cond = ((w: string, n: number) => boolean) | null;
/** suffix, replacement, condition on the stem (the word without the suffix). */
type Rule = readonly [string, string, Cond];

const STEP1B: Rule[] = [
  ["eed", "ee", mGt0],
  ["ed", "", hasVowel],
  ["ing", "", hasVowel],
];
const STEP1B2: Rule[] = [
  ["at", "ate", null],
  ["bl", "ble", null],
  ["iz", "ize", null],
];
const STEP2: Rule[] = (
  [
    ["ational", "ate"],
    ["tional", "tion"],
    ["enci", "ence"],
    ["anci", "ance"],
    ["izer", "ize"],
    ["logi", "log"],
    ["bli", "ble"],
    ["alli", "al"],
    ["entli", "ent"],
    ["eli", "e"],
    ["ousli", "ous"],
    ["ization", "ize"],
    ["ation", "ate"],
    ["ator", "ate"],
    ["alism", "al"],
    ["iveness", "ive"],
    ["fulness", "ful"],
    ["ousness", "ous"],
    ["aliti", "al"],
    ["iviti", "ive"],
    ["biliti", "ble"],
  ] as const
).map(([s, r]) => [s, r, mGt0] as const);
const STEP3: Rule[] = (
  [
    ["ical", "ic"],
    ["ness", ""],
    ["icate", "ic"],
    ["iciti", "ic"],
    ["ful", ""],
    ["ative", ""],
    ["alize", "al"],
  ] as const
).map(([s, r]) => [s, r, mGt0] as const);
const STEP4: Rule[] = "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize"
  .split(" ")
  .map((s) => [s, "", s === "ion" ? endsS : mGt1] as const);

/**
 * Applies the first rule whose suffix ends `w` (a suffix never matches the whole word), when its
 * condition holds. FTS5 stops at the first matching suffix even when its condition fails.
 * Returns the new word and whether a rule fired.
 */
function apply(w: string, rules: readonly Rule[]): [string, boolean] {
  const n = w.length;
  for (const [suffix, out, cond] of rules) {
    if (n <= suffix.length || !w.endsWith(suffix)) continue;
    const stem = n - suffix.length;
    if (cond !== null && !cond(w, stem)) return [w, false];
    return [w.slice(0, stem) + out, true];
  }
  return [w, false];
}

function step1a(w: string): string {
  const n = w.length;
  if (w[n - 1] !== "s") return w;
  if (w[n - 2] === "e") {
    const sses = n > 4 && w[n - 4] === "s" && w[n - 3] === "s";
    const ies = n > 3 && w[n - 3] === "i";
    return w.slice(0, sses || ies ? n - 2 : n - 1);
  }
  return w[n - 2] === "s" ? w : w.slice(0, n - 1);
}

/** Stems one token (its UTF-8 bytes as char codes). */
export function porterStem(token: string): string {
  if (token.length > PORTER_MAX_BYTES || token.length < 3) return token;
  const [after1b, fired] = apply(step1a(token), STEP1B);
  let w = after1b;
  if (fired) {
    let grown: boolean;
    [w, grown] = apply(w, STEP1B2);
    if (!grown) {
      const n = w.length;
      const c = w[n - 1];
      if (!isVowel(c, false) && c !== "l" && c !== "s" && c !== "z" && n > 1 && c === w[n - 2]) w = w.slice(0, n - 1);
      else if (mEq1(w, n) && oStar(w, n)) w += "e";
    }
  }
  if (w[w.length - 1] === "y" && hasVowel(w, w.length - 1)) w = `${w.slice(0, -1)}i`;
  [w] = apply(w, STEP2);
  [w] = apply(w, STEP3);
  [w] = apply(w, STEP4);
  let n = w.length;
  if (w[n - 1] === "e" && (mGt1(w, n - 1) || (mEq1(w, n - 1) && !oStar(w, n - 1)))) n--;
  if (n > 1 && w[n - 1] === "l" && w[n - 2] === "l" && mGt1(w, n - 1)) n--;
  return w.slice(0, n);
}
