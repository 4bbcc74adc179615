// Shared by the parser tests (src/workflow and the qa-, code- and math- workflows): 10,000 seeded
// random and adversarial strings built from format pieces, and a check that a parser returns a
// well-formed ParseResult (never throws) for each of them and for non-strings. Test helper only; it
// knows nothing about any one workflow — callers pass their format's pieces.
import { MAX_PARSE_CHARS, type Parser } from "../../src/workflow/index.js";
import { createRng } from "../../src/rng.js";

/** Pieces every fuzz run mixes in: brackets, quotes, escapes, odd Unicode, fences, tags. */
const GENERIC_PIECES = ["{", "}", "[", "]", '"', "\\", ",", "```", "\n", " ", "<", ">", "/", "\u0000", "\ud800", "é", "🙂", "İ", "x", "42"];

/** The tokens of the library parsers' formats (src/workflow/parsers: tags, search-or-end, \\boxed{}, JSON string lists). */
export const LIBRARY_PIECES = [
  "<final_answer>",
  "</final_answer>",
  "<search>",
  "</search>",
  "<end>",
  "<end/>",
  "\\boxed{",
  "\\boxed",
  "```json\n",
  '["',
  '["a"',
  '"]',
  '", "',
  "null",
];

/** Inputs chosen to hit slow paths (huge repeats, unbalanced openers, lone surrogates, over-long text) and near misses. */
const ADVERSARIAL = [
  // empty and blank
  "",
  " \n\t ",
  "\n".repeat(50_000),
  " ".repeat(50_000),
  // JSON lists
  "[".repeat(50_000),
  "]".repeat(50_000),
  '["'.repeat(20_000),
  `[${'"a",'.repeat(30_000)}"b"]`,
  '["a","b","c","d"]',
  '["a", 2]',
  // braces and \boxed{}
  "{".repeat(50_000),
  "\\boxed{".repeat(20_000),
  // tags
  "<final_answer>".repeat(10_000),
  "<final_answer></final_answer>",
  "<final_answer>x".repeat(5_000),
  "<search>".repeat(10_000) + "</search>",
  "<search>a</search><search>b</search>",
  "<search>q</search><end>",
  `<search>${"q".repeat(5_000)}</search>`,
  `<end${" ".repeat(50_000)}x`,
  `<${" ".repeat(50_000)}`,
  // code fences
  "```".repeat(20_000),
  "```js\n".repeat(20_000),
  "```\n```".repeat(20_000),
  `\`\`\`js\n${" ".repeat(50_000)}`,
  // too long, broken Unicode
  "x".repeat(MAX_PARSE_CHARS + 1),
  "\ud800\udc00\ud800",
];

/**
 * `count` strings: the adversarial set, then random concatenations of `pieces` (plus the generic
 * ones) and random BMP characters, all from `seed`.
 * @example const inputs = fuzzStrings(7, ["```js\n", "function f() {}"]);
 */
export function fuzzStrings(seed: number, pieces: readonly string[], count = 10_000): string[] {
  const { next: rand } = createRng(seed);
  const all = [...pieces, ...GENERIC_PIECES];
  const randomString = (): string => {
    const n = Math.floor(rand() * 60);
    let s = "";
    for (let i = 0; i < n; i++) s += rand() < 0.6 ? all[Math.floor(rand() * all.length)] : String.fromCharCode(Math.floor(rand() * 0x3000));
    return s;
  };
  return [...ADVERSARIAL, ...Array.from({ length: count - ADVERSARIAL.length }, randomString)];
}

/** What one parser did on the inputs: problems found, and how many inputs it accepted. */
export interface FuzzReport {
  problems: string[];
  accepted: number;
}

/**
 * Runs `parser` on every input and on a few non-strings. A problem is a throw, a result that is
 * neither `{ ok: true, value }` nor `{ ok: false, reason }` with a non-empty reason, a non-string
 * accepted, or an accepted value that `valid` (when given: is it a value of the role's type?) rejects.
 * @example expect(fuzzParser("code", jsBlockParser, inputs).problems).toEqual([]);
 */
export function fuzzParser(
  name: string,
  parser: Parser<unknown>,
  inputs: readonly string[],
  valid: (value: unknown) => boolean = () => true,
): FuzzReport {
  const problems: string[] = [];
  let accepted = 0;
  const show = (s: unknown) => JSON.stringify(String(s).slice(0, 80));
  for (const s of [...inputs, undefined, null, 42, {}, []] as string[]) {
    try {
      const r = parser(s);
      const wellFormed = r?.ok === true ? "value" in r : r?.ok === false && typeof r.reason === "string" && r.reason !== "";
      if (!wellFormed) problems.push(`${name}: malformed result on ${show(s)}: ${JSON.stringify(r)?.slice(0, 120)}`);
      else if (r.ok) {
        accepted++;
        if (typeof s !== "string") problems.push(`${name}: accepted a non-string`);
        else if (!valid(r.value)) problems.push(`${name}: invalid value on ${show(s)}: ${JSON.stringify(r.value)?.slice(0, 120)}`);
      }
    } catch (err) {
      problems.push(`${name} threw on ${show(s)}: ${String(err)}`);
    }
  }
  return { problems, accepted };
}
