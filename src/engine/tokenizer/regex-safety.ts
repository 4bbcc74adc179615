// Decides, before @lenml/tokenizers compiles them, whether the regexes of a tokenizer.json (Split
// and Replace patterns) can backtrack catastrophically: V8 runs them with a backtracking engine that
// cannot be interrupted, so one hostile pattern would hang every encode. A static check over the
// pattern's position (Glushkov) automaton, counting the distinct paths the engine would try (see
// `analyse`); it never runs a pattern on text.
import { MasoError } from "../../errors.js";
import { type CharSet, type RegexNode, RegexUnverifiable, intersect, isEmpty, mayIntersect, parseRegex } from "./regex-parse.js";

/** Positions (character occurrences after unrolling counted repeats) beyond this are not analysed. */
const MAX_POSITIONS = 4000;
/** Work (graph edges visited) beyond this is not analysed: the pattern is refused as too complex. */
const MAX_WORK = 1_000_000;
/** Counted repeats up to this many copies are unrolled exactly; larger ones are modelled as a loop. */
const MAX_UNROLL = 4;

/** Why a pattern is unsafe, or null when it is safe. */
export type RegexVerdict = null | { reason: string };

type Counts = Map<number, number>;

interface Built {
  /** ways to match the empty string (capped at 2) */
  nul: number;
  /** ways to match the empty string without passing an assertion */
  cleanNul: number;
  first: Counts;
  last: Counts;
  /** last positions with no assertion after them inside the node */
  cleanLast: Set<number>;
}

class TooComplex extends Error {}

const cap = (n: number) => Math.min(n, 2);

function addScaled(into: Counts, from: Counts, k: number): void {
  if (k === 0) return;
  for (const [p, c] of from) into.set(p, cap((into.get(p) ?? 0) + c * k));
}

/** The Glushkov (position) automaton of a pattern, with how many distinct paths of the pattern join two positions. */
class Automaton {
  readonly classes: CharSet[] = [];
  readonly follow: Counts[] = [];
  readonly lookarounds: RegexNode[] = [];

  private position(set: CharSet): number {
    if (this.classes.length >= MAX_POSITIONS) throw new TooComplex();
    this.classes.push(set);
    this.follow.push(new Map());
    return this.classes.length - 1;
  }

  private link(from: Counts, to: Counts): void {
    for (const [p, c] of from) addScaled(this.follow[p], to, c);
  }

  build(n: RegexNode): Built {
    switch (n.t) {
      case "char": {
        if (isEmpty(n.set)) return { nul: 0, cleanNul: 0, first: new Map(), last: new Map(), cleanLast: new Set() };
        const p = this.position(n.set);
        return { nul: 0, cleanNul: 0, first: new Map([[p, 1]]), last: new Map([[p, 1]]), cleanLast: new Set([p]) };
      }
      case "assert":
        if (n.look) this.lookarounds.push(n.look);
        return { nul: 1, cleanNul: 0, first: new Map(), last: new Map(), cleanLast: new Set() };
      case "seq":
        return n.items.reduce<Built>((acc, item) => this.concat(acc, this.build(item)), EMPTY());
      case "alt": {
        const out: Built = { nul: 0, cleanNul: 0, first: new Map(), last: new Map(), cleanLast: new Set() };
        for (const a of n.alts) {
          const b = this.build(a);
          out.nul = cap(out.nul + b.nul);
          out.cleanNul = cap(out.cleanNul + b.cleanNul);
          addScaled(out.first, b.first, 1);
          addScaled(out.last, b.last, 1);
          for (const p of b.cleanLast) out.cleanLast.add(p);
        }
        return out;
      }
      case "rep":
        return this.repeat(n.body, n.min, n.max);
    }
  }

  private concat(a: Built, b: Built): Built {
    this.link(a.last, b.first);
    const first = new Map(a.first);
    addScaled(first, b.first, a.nul);
    const last = new Map(b.last);
    addScaled(last, a.last, b.nul);
    const cleanLast = new Set(b.cleanLast);
    if (b.cleanNul > 0) for (const p of a.cleanLast) cleanLast.add(p);
    return { nul: cap(a.nul * b.nul), cleanNul: cap(a.cleanNul * b.cleanNul), first, last, cleanLast };
  }

  /** body* : V8 refuses an iteration that matched nothing, so the loop adds no empty paths. */
  private star(body: RegexNode): Built {
    const b = this.build(body);
    this.link(b.last, b.first);
    return { nul: 1, cleanNul: 1, first: b.first, last: b.last, cleanLast: b.cleanLast };
  }

  private optional(body: () => Built): Built {
    const b = body();
    return { ...b, nul: cap(b.nul + 1), cleanNul: cap(b.cleanNul + 1) };
  }

  private repeat(body: RegexNode, min: number, max: number): Built {
    // X{min,max}: min copies, then (max - min) nested optional copies, or a loop when unbounded or large
    const copies = Math.min(min, MAX_UNROLL);
    let acc = EMPTY();
    for (let k = 0; k < copies; k++) acc = this.concat(acc, this.build(body));
    const extra = max - min;
    if (extra === 0 && min <= MAX_UNROLL) return acc;
    if (extra <= MAX_UNROLL && min <= MAX_UNROLL) {
      const nested = (k: number): Built => this.optional(() => (k === 1 ? this.build(body) : this.concat(this.build(body), nested(k - 1))));
      return this.concat(acc, nested(extra));
    }
    return this.concat(acc, this.star(body));
  }
}

const EMPTY = (): Built => ({ nul: 1, cleanNul: 1, first: new Map(), last: new Map(), cleanLast: new Set() });

/**
 * Tarjan's strongly connected components, iteratively, of the nodes reachable from `roots`; returns
 * a component id per node reached. Ids are in reverse topological order: an edge between two
 * components always goes from the higher id to the lower.
 */
function components(roots: readonly number[], succ: (v: number) => readonly number[]): Map<number, number> {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const comp = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  let next = 0;
  let nComp = 0;
  const enter = (v: number) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
  };
  for (const root of roots) {
    if (index.has(root)) continue;
    enter(root);
    const work: [number, number][] = [[root, 0]];
    while (work.length > 0) {
      const top = work[work.length - 1];
      const [v, k] = top;
      const s = succ(v);
      if (k < s.length) {
        top[1]++;
        const w = s[k];
        if (!index.has(w)) {
          enter(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const u = work[work.length - 1][0];
        low.set(u, Math.min(low.get(u) as number, low.get(v) as number));
      }
      if (low.get(v) === index.get(v)) {
        let w: number;
        do {
          w = stack.pop() as number;
          onStack.delete(w);
          comp.set(w, nComp);
        } while (w !== v);
        nComp++;
      }
    }
  }
  return comp;
}

/** Ambiguous joins on one path beyond this (2^this ways to match the same text) are refused. */
const MAX_JOINS = 10;

const EXPONENTIAL = "a loop can match the same text in more than one way (exponential backtracking)";

/**
 * The ambiguity analysis of one pattern (Weber–Seidl; Allauzen–Mohri–Rastogi) on its position
 * automaton, with how many distinct paths of the pattern join two positions. A backtracking engine
 * tries every path that reads the text: exponentially many when a loop can read the same text along
 * two paths (EDA), or when many alternatives that match the same text follow one another; a
 * polynomial number of degree k+1 when k loops can hand the same text on to one another (IDA). EDA
 * and long chains of ambiguous alternatives are always refused; IDA only when the later loop is not
 * an unconditional end of the match (where the first split the engine tries already succeeds),
 * since the common pre-tokenizer patterns (`\s*[\r\n]+`) have that shape.
 */
function analyse(node: RegexNode, finalExempt: boolean, work: { n: number }): RegexVerdict {
  const a = new Automaton();
  const root = a.build(node);
  const n = a.classes.length;
  const N = n + 1; // positions, and a virtual one (n) before the first character that nothing enters
  const finals = finalExempt ? root.cleanLast : new Set<number>();
  const follow: Counts[] = [...a.follow, root.first];
  const succ: number[][] = follow.map((f) => [...f.keys()]);
  const meets = new Map<number, boolean>();
  const meet = (p: number, q: number): boolean => {
    const k = p * N + q;
    let m = meets.get(k);
    if (m === undefined) {
      m = mayIntersect(a.classes[p], a.classes[q]);
      meets.set(k, m);
    }
    return m;
  };
  const pairSets = new Map<number, CharSet>();
  const meet3 = (x: number, y: number, z: number): boolean => {
    const k = x * N + y;
    let xy = pairSets.get(k);
    if (xy === undefined) {
      xy = intersect(a.classes[x], a.classes[y]);
      pairSets.set(k, xy);
    }
    return mayIntersect(xy, a.classes[z]);
  };
  const spend = (k: number) => {
    work.n += k;
    if (work.n > MAX_WORK) throw new TooComplex();
  };

  // the pair automaton: (p,q) -> (p',q') when both steps can read the same character; it is
  // symmetric, so each pair is kept once as (min, max), which keeps its components and joins
  const pairCache = new Map<number, number[]>();
  const pairSucc = (v: number): number[] => {
    let out = pairCache.get(v);
    if (out === undefined) {
      const p = Math.floor(v / N);
      const q = v % N;
      const next = new Set<number>();
      for (const p2 of succ[p]) for (const q2 of succ[q]) if (meet(p2, q2)) next.add(p2 <= q2 ? p2 * N + q2 : q2 * N + p2);
      spend(succ[p].length * succ[q].length + 1);
      out = [...next];
      pairCache.set(v, out);
    }
    return out;
  };
  const isDiagonal = (v: number) => Math.floor(v / N) === v % N;
  const diagonal = Array.from({ length: N }, (_, p) => p * N + p);
  const comp = components(diagonal, pairSucc);

  // EDA: a component holding (p,p) and (q,r) with q≠r, or a doubled edge (p,p)→(p',p') inside one
  const compHasDiagonal = new Set(diagonal.map((v) => comp.get(v)));
  for (const v of pairCache.keys()) if (!isDiagonal(v) && compHasDiagonal.has(comp.get(v))) return { reason: EXPONENTIAL };
  for (let p = 0; p < N; p++)
    for (const [p2, c] of follow[p]) if (c > 1 && comp.get(p * N + p) === comp.get(p2 * N + p2)) return { reason: EXPONENTIAL };

  // joins: paths that part and meet again, or a doubled edge, each double the ways to read a text;
  // the most on one path, over the components in topological order (no component mixes the two kinds now)
  const joinsAt = new Map<number, number>();
  const byComp = [...comp.entries()].sort((x, y) => y[1] - x[1]);
  for (const [u, cu] of byComp) {
    const base = joinsAt.get(cu) ?? 0;
    const [p, q] = [Math.floor(u / N), u % N];
    for (const v of pairSucc(u)) {
      const cv = comp.get(v) as number;
      if (cv === cu) continue;
      const doubled = isDiagonal(v) && (p !== q || (follow[p].get(Math.floor(v / N)) ?? 0) > 1);
      const joins = base + (doubled ? 1 : 0);
      if (joins > (joinsAt.get(cv) ?? 0)) joinsAt.set(cv, joins);
      if (joins > MAX_JOINS)
        return { reason: `more than ${MAX_JOINS} alternatives in a row can match the same text (exponential backtracking)` };
    }
  }

  // IDA: loops p ≠ q with words w such that p -w-> p, p -w-> q, q -w-> q (a path (p,p,q) ⇝ (p,q,q) in A³)
  const selfComp = components(
    Array.from({ length: n }, (_, v) => v),
    (v) => succ[v],
  );
  const loops = [...Array(n).keys()].filter((p) => succ[p].some((x) => selfComp.get(x) === selfComp.get(p)));
  const key = (x: number, y: number, z: number) => (x * N + y) * N + z;
  for (const q of loops) {
    if (finals.has(q)) continue;
    for (const p of loops) {
      if (p === q) continue;
      const target = key(p, q, q);
      const seen = new Set<number>();
      const queue = [key(p, p, q)];
      let found = false;
      while (queue.length > 0 && !found) {
        const v = queue.pop() as number;
        const x = Math.floor(v / (N * N));
        const y = Math.floor(v / N) % N;
        const z = v % N;
        spend(succ[x].length * succ[y].length * succ[z].length + 1);
        for (const x2 of succ[x])
          for (const y2 of succ[y]) {
            if (!meet(x2, y2)) continue;
            for (const z2 of succ[z]) {
              if (!meet(x2, z2) || !meet(y2, z2) || !meet3(x2, y2, z2)) continue;
              const w = key(x2, y2, z2);
              if (w === target) found = true;
              if (!seen.has(w)) {
                seen.add(w);
                queue.push(w);
              }
            }
          }
      }
      if (found) return { reason: "two loops can split the same text between them before the match can fail (polynomial backtracking)" };
    }
  }

  // a lookaround's body is matched on its own at every position; a negative one must fail, so no exemption
  for (const look of a.lookarounds) {
    const v = analyse(look, false, work);
    if (v) return { reason: `inside a lookaround: ${v.reason}` };
  }
  return null;
}

/**
 * Whether `source` (a JS regex, `u` flag) may backtrack catastrophically; null when it is safe.
 * Backreferences and syntax the analysis does not model count as unsafe.
 * @example
 * regexVerdict("(a+)+$"); // { reason: "a loop can match the same text in more than one way ..." }
 * regexVerdict("\\s+(?!\\S)|\\s+"); // null
 */
export function regexVerdict(source: string): RegexVerdict {
  try {
    return analyse(parseRegex(source), true, { n: 0 });
  } catch (e) {
    if (e instanceof RegexUnverifiable) return { reason: `it uses syntax maso cannot verify (${e.message})` };
    if (e instanceof TooComplex) return { reason: "it is too complex to verify" };
    throw e;
  }
}

// What @lenml/tokenizers does to a tokenizer.json Regex before compiling it (its createPattern):
// unescape \# \& \~, and rewrite two known patterns JavaScript cannot compile as written.
const LENML_PUNCT = ".,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C";
const LENML_REWRITES: [string, string][] = [
  ["(?i:'s|'t|'re|'ve|'m|'ll|'d)", "(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))"],
  [` ?[^(\\s|[${LENML_PUNCT}])]+`, ` ?[^\\s${LENML_PUNCT}]+`],
];

/** The JS source the tokenizer library compiles a tokenizer.json Regex to. */
export function lenmlRegexSource(pattern: string): string {
  let s = pattern.replace(/\\([#&~])/g, "$1");
  for (const [from, to] of LENML_REWRITES) s = s.replaceAll(from, to);
  return s;
}

/** Every `{"Regex": "…"}` in the pipeline parts of a tokenizer.json, with its JSON path. */
function regexesOf(tokenizerJson: Record<string, unknown>): { path: string; pattern: string }[] {
  const out: { path: string; pattern: string }[] = [];
  const stack: [unknown, string, number][] = ["normalizer", "pre_tokenizer", "post_processor", "decoder"].map((k) => [
    tokenizerJson[k],
    k,
    0,
  ]);
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop() as [unknown, string, number];
    if (v === null || typeof v !== "object" || depth > 32) continue;
    for (const [k, child] of Object.entries(v as object)) {
      const at = Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`;
      if (k === "Regex" && typeof child === "string") out.push({ path: at, pattern: child });
      else stack.push([child, at, depth + 1]);
    }
  }
  return out;
}

/**
 * Refuses a tokenizer.json whose normalizer, pre-tokenizer, post-processor or decoder regexes could
 * backtrack catastrophically (see {@link regexVerdict}). Patterns V8 cannot compile are left to the
 * tokenizer library, which names them. `where` is the file, named in the error.
 * Errors: TOKENIZER_UNSAFE_REGEX naming the file, the JSON path and the pattern.
 * @example
 * checkTokenizerRegexes(json, "models/qwen/tokenizer.json");
 */
export function checkTokenizerRegexes(tokenizerJson: Record<string, unknown>, where: string): void {
  for (const { path, pattern } of regexesOf(tokenizerJson)) {
    const source = lenmlRegexSource(pattern);
    try {
      new RegExp(source, "gu");
    } catch {
      continue;
    }
    const verdict = regexVerdict(source);
    if (verdict) {
      const shown = pattern.length > 200 ? `${pattern.slice(0, 197)}...` : pattern;
      throw new MasoError(
        "TOKENIZER_UNSAFE_REGEX",
        `${where}: ${path} ${JSON.stringify(shown)} is refused: ${verdict.reason}`,
        "a pattern with nested or overlapping repetition can take minutes on a short text; use the model's original tokenizer.json",
      );
    }
  }
}
