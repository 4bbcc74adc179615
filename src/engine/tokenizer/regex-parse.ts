// Parses a JavaScript regular expression (the `u`-flag syntax tokenizer.json patterns compile to)
// into a small tree of character sets, sequences, alternations, repetitions and assertions, for
// regex-safety.ts to analyse. It never runs the pattern on text; V8 has already accepted it.
// Character sets are exact code point ranges over the BMP; above it, a \p{…} set is "fuzzy"
// (unknown): intersections there are assumed, which only ever makes the analysis more cautious.

/** Inclusive code point ranges, sorted and disjoint. */
export type Ranges = readonly (readonly [number, number])[];

/**
 * A set of code points. `fuzzy`: the part above U+FFFF is unknown (a Unicode property), so
 * `ranges` only describes the BMP and an intersection there is assumed possible.
 */
export interface CharSet {
  ranges: Ranges;
  fuzzy: boolean;
}

export type RegexNode =
  | { t: "char"; set: CharSet }
  | { t: "seq"; items: RegexNode[] }
  | { t: "alt"; alts: RegexNode[] }
  | { t: "rep"; body: RegexNode; min: number; max: number }
  /** ^ $ \b \B, or a lookaround whose body is checked on its own */
  | { t: "assert"; look?: RegexNode };

/** The pattern uses syntax the analysis does not model (a backreference, an unknown group). */
export class RegexUnverifiable extends Error {}

const MAX_CP = 0x10ffff;
const BMP_END = 0xffff;

function normalize(rs: [number, number][]): [number, number][] {
  rs.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of rs) {
    const last = out.at(-1);
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

const clipBmp = (rs: Ranges): [number, number][] =>
  rs.filter(([lo]) => lo <= BMP_END).map(([lo, hi]) => [lo, Math.min(hi, BMP_END)] as [number, number]);

export const exact = (rs: [number, number][]): CharSet => ({ ranges: normalize(rs), fuzzy: false });

export function union(a: CharSet, b: CharSet): CharSet {
  const fuzzy = a.fuzzy || b.fuzzy;
  const rs = [...a.ranges, ...b.ranges].map(([lo, hi]) => [lo, hi] as [number, number]);
  return { ranges: fuzzy ? normalize(clipBmp(rs)) : normalize(rs), fuzzy };
}

export function complement(a: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  const top = a.fuzzy ? BMP_END : MAX_CP;
  for (const [lo, hi] of a.ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= top) out.push([next, top]);
  return { ranges: out, fuzzy: a.fuzzy };
}

function intersectRanges(a: Ranges, b: Ranges): [number, number][] {
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i][0], b[j][0]);
    const hi = Math.min(a[i][1], b[j][1]);
    if (lo <= hi) out.push([lo, hi]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

const hasAstral = (s: CharSet): boolean => s.fuzzy || (s.ranges.at(-1)?.[1] ?? 0) > BMP_END;

/** A superset of a ∩ b (exact on the BMP; above it, fuzzy wherever either side is unknown). */
export function intersect(a: CharSet, b: CharSet): CharSet {
  if (a.fuzzy && b.fuzzy) return { ranges: intersectRanges(a.ranges, b.ranges), fuzzy: true };
  if (!a.fuzzy && !b.fuzzy) return { ranges: intersectRanges(a.ranges, b.ranges), fuzzy: false };
  // a fuzzy set's ranges stop at the BMP; above it the result can only lie in the other side's ranges
  const known = a.fuzzy ? b : a;
  const astral = known.ranges.filter(([, hi]) => hi > BMP_END).map(([lo, hi]) => [Math.max(lo, BMP_END + 1), hi] as [number, number]);
  return { ranges: normalize([...intersectRanges(a.ranges, b.ranges), ...astral]), fuzzy: false };
}

function rangesMeet(a: Ranges, b: Ranges): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (Math.max(a[i][0], b[j][0]) <= Math.min(a[i][1], b[j][1])) return true;
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return false;
}

/** Whether a and b may share a code point (never false when they do). */
export function mayIntersect(a: CharSet, b: CharSet): boolean {
  if (rangesMeet(a.ranges, b.ranges)) return true;
  if (!a.fuzzy && !b.fuzzy) return false;
  return hasAstral(a) && hasAstral(b);
}

export const isEmpty = (s: CharSet): boolean => s.ranges.length === 0 && !s.fuzzy;

const DIGIT = exact([[0x30, 0x39]]);
const WORD = exact([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
// ECMAScript WhiteSpace and LineTerminator
const SPACE = exact([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const DOT = complement(
  exact([
    [0x0a, 0x0a],
    [0x0d, 0x0d],
    [0x2028, 0x2029],
  ]),
);

let bmpText: string | undefined;
const propertyCache = new Map<string, CharSet>();

/** The BMP code points (surrogates left out) as one string: what a property is scanned against. */
function bmpUniverse(): string {
  if (bmpText === undefined) {
    const units = new Uint16Array(0xd800 + 0x2000);
    for (let i = 0; i < 0xd800; i++) units[i] = i;
    for (let i = 0; i < 0x2000; i++) units[0xd800 + i] = 0xe000 + i;
    bmpText = new TextDecoder("utf-16le").decode(units);
  }
  return bmpText;
}

/** \p{name}: its BMP ranges, found by letting V8 match it against every BMP code point; fuzzy above. */
function property(name: string): CharSet {
  let set = propertyCache.get(name);
  if (set === undefined) {
    const re = new RegExp(`\\p{${name}}+`, "gu"); // throws for an unknown property, as V8 would have
    const rs: [number, number][] = [];
    for (const m of bmpUniverse().matchAll(re)) {
      const at = m.index ?? 0;
      const cp = (i: number) => (i < 0xd800 ? i : i + 0x800);
      rs.push([cp(at), cp(at + m[0].length - 1)]);
    }
    set = { ranges: normalize(rs), fuzzy: true };
    propertyCache.set(name, set);
  }
  return set;
}

const SYNTAX = new Set("^$\\.*+?()[]{}|/".split(""));

/**
 * Parses `source` (already accepted by `new RegExp(source, "u")`). Throws RegexUnverifiable for
 * backreferences and any syntax outside the modelled subset.
 * @example
 * parseRegex("\\s+(?!\\S)|\\s+"); // { t: "alt", alts: [...] }
 */
export function parseRegex(source: string): RegexNode {
  const cps = Array.from(source, (c) => c.codePointAt(0) as number);
  let i = 0;
  const peek = (k = 0): string | undefined => (i + k < cps.length ? String.fromCodePoint(cps[i + k]) : undefined);
  const fail = (what: string): never => {
    throw new RegexUnverifiable(`${what} at offset ${i}`);
  };

  const hex = (n: number): number => {
    let v = 0;
    for (let k = 0; k < n; k++) {
      const d = Number.parseInt(peek() ?? "", 16);
      if (Number.isNaN(d)) fail("bad hex escape");
      v = v * 16 + d;
      i++;
    }
    return v;
  };

  /** After a backslash: a set (class escapes) or one code point. */
  const escapeAt = (inClass: boolean): CharSet | number => {
    const c = peek();
    if (c === undefined) return fail("trailing backslash");
    i++;
    switch (c) {
      case "d":
        return DIGIT;
      case "D":
        return complement(DIGIT);
      case "w":
        return WORD;
      case "W":
        return complement(WORD);
      case "s":
        return SPACE;
      case "S":
        return complement(SPACE);
      case "p":
      case "P": {
        if (peek() !== "{") fail("\\p without {");
        const end = cps.indexOf(0x7d, i);
        if (end < 0) fail("unterminated \\p{");
        const name = String.fromCodePoint(...cps.slice(i + 1, end));
        i = end + 1;
        const set = property(name);
        return c === "p" ? set : complement(set);
      }
      case "n":
        return 0x0a;
      case "r":
        return 0x0d;
      case "t":
        return 0x09;
      case "v":
        return 0x0b;
      case "f":
        return 0x0c;
      case "0":
        return 0;
      case "b":
        return inClass ? 0x08 : fail("\\b outside a class is an assertion");
      case "-":
        return inClass ? 0x2d : fail("\\- outside a class");
      case "c": {
        const l = peek();
        if (l === undefined || !/[A-Za-z]/.test(l)) return fail("bad \\c escape");
        i++;
        return (l.codePointAt(0) as number) % 32;
      }
      case "x":
        return hex(2);
      case "u": {
        if (peek() === "{") {
          const end = cps.indexOf(0x7d, i);
          if (end < 0) fail("unterminated \\u{");
          const v = Number.parseInt(String.fromCodePoint(...cps.slice(i + 1, end)), 16);
          i = end + 1;
          return v;
        }
        const hi = hex(4);
        // a surrogate pair written as two \u escapes is one code point
        if (hi >= 0xd800 && hi <= 0xdbff && peek() === "\\" && peek(1) === "u") {
          const save = i;
          i += 2;
          const lo = /^[0-9a-fA-F]{4}$/.test(String.fromCodePoint(...cps.slice(i, i + 4))) ? hex(4) : -1;
          if (lo >= 0xdc00 && lo <= 0xdfff) return 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
          i = save;
        }
        return hi;
      }
      case "k":
        return fail("backreference");
      default:
        if (/[1-9]/.test(c)) return fail("backreference");
        if (SYNTAX.has(c)) return c.codePointAt(0) as number;
        return fail(`escape \\${c}`);
    }
  };

  const asSet = (v: CharSet | number): CharSet => (typeof v === "number" ? exact([[v, v]]) : v);

  // inside (?i:…) a set that holds a letter may match any letter (a superset of its case variants)
  let caseless = false;
  const char = (set: CharSet): RegexNode => {
    if (!caseless) return { t: "char", set };
    const letters = property("L");
    return { t: "char", set: mayIntersect(set, letters) ? union(set, letters) : set };
  };

  const charClass = (): CharSet => {
    i++; // [
    const negate = peek() === "^";
    if (negate) i++;
    let set: CharSet = exact([]);
    const atom = (): CharSet | number => {
      const c = peek();
      if (c === undefined) return fail("unterminated class");
      if (c === "\\") {
        i++;
        return escapeAt(true);
      }
      i++;
      return c.codePointAt(0) as number;
    };
    while (peek() !== "]") {
      const a = atom();
      if (peek() === "-" && peek(1) !== "]" && peek(1) !== undefined) {
        i++;
        const b = atom();
        if (typeof a !== "number" || typeof b !== "number") return fail("class range with a class escape");
        set = union(set, exact([[a, b]]));
      } else set = union(set, asSet(a));
    }
    i++; // ]
    return negate ? complement(set) : set;
  };

  const quantifier = (): { min: number; max: number } | undefined => {
    const c = peek();
    let q: { min: number; max: number } | undefined;
    if (c === "*") q = { min: 0, max: Number.POSITIVE_INFINITY };
    else if (c === "+") q = { min: 1, max: Number.POSITIVE_INFINITY };
    else if (c === "?") q = { min: 0, max: 1 };
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(String.fromCodePoint(...cps.slice(i, i + 40)));
      if (!m) return undefined;
      i += m[0].length - 1;
      const min = Number(m[1]);
      q = { min, max: m[2] === undefined ? min : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]) };
    }
    if (!q) return undefined;
    i++;
    if (peek() === "?") i++; // lazy: the same paths, tried in another order
    return q;
  };

  const term = (): RegexNode | undefined => {
    const c = peek();
    if (c === undefined || c === "|" || c === ")") return undefined;
    let node: RegexNode;
    if (c === "^" || c === "$") {
      i++;
      return { t: "assert" };
    }
    if (c === "(") {
      i++;
      let look = false;
      if (peek() === "?") {
        const a = peek(1);
        const b = peek(2);
        if (a === ":") i += 2;
        else if (a === "=" || a === "!") {
          i += 2;
          look = true;
        } else if (a === "<" && (b === "=" || b === "!")) {
          i += 3;
          look = true;
        } else if (a === "<") {
          const end = cps.indexOf(0x3e, i);
          if (end < 0) fail("unterminated group name");
          i = end + 1;
        } else {
          // (?i:…), (?-i:…): modifiers, which newer V8 versions accept
          const m = /^\?([ims]*)(?:-([ims]+))?:/.exec(String.fromCodePoint(...cps.slice(i, i + 12)));
          if (!m) return fail("group syntax");
          i += m[0].length;
          const outer = caseless;
          caseless = (outer || m[1].includes("i")) && !(m[2] ?? "").includes("i");
          const body = alternation();
          caseless = outer;
          if (peek() !== ")") fail("unclosed group");
          i++;
          node = body;
          for (let q = quantifier(); q; q = quantifier()) node = { t: "rep", body: node, ...q };
          return node;
        }
      }
      const body = alternation();
      if (peek() !== ")") fail("unclosed group");
      i++;
      if (look) return { t: "assert", look: body };
      node = body;
    } else if (c === "[") node = char(charClass());
    else if (c === ".") {
      i++;
      node = char(DOT);
    } else if (c === "\\") {
      if (peek(1) === "b" || peek(1) === "B") {
        i += 2;
        return { t: "assert" };
      }
      i++;
      node = char(asSet(escapeAt(false)));
    } else {
      i++;
      node = char(asSet(c.codePointAt(0) as number));
    }
    for (let q = quantifier(); q; q = quantifier()) node = { t: "rep", body: node, ...q };
    return node;
  };

  const sequence = (): RegexNode => {
    const items: RegexNode[] = [];
    for (let n = term(); n; n = term()) items.push(n);
    return items.length === 1 ? items[0] : { t: "seq", items };
  };

  function alternation(): RegexNode {
    const alts = [sequence()];
    while (peek() === "|") {
      i++;
      alts.push(sequence());
    }
    return alts.length === 1 ? alts[0] : { t: "alt", alts };
  }

  const root = alternation();
  if (i < cps.length) fail("unexpected )");
  return root;
}
