// Seeded fuzz inputs for role parsers: adversarial strings (huge, nested, unclosed, odd Unicode) and
// random strings built mostly from the tokens the reference roles' formats are made of.
import { MAX_PARSE_CHARS } from "../../src/workflow/index.js";
import { mulberry32 } from "../../src/workflow/test-prng.js";

const PIECES = [
  "<final_answer>",
  "</final_answer>",
  "<search>",
  "</search>",
  "<end>",
  "<end/>",
  "< END >",
  "no useful information",
  '["',
  '"]',
  '", "',
  "[",
  "]",
  '"',
  "\\",
  ",",
  "```",
  "```json\n",
  "null",
  "{}",
  "\n",
  " ",
  "<",
  ">",
  "/",
  "Lizal",
  "Kapas Loudrushum",
  "\u0000",
  "\ud800",
  "é",
  "🙂",
  "İ",
  "42",
];

const ADVERSARIAL = [
  "",
  " \n\t ",
  "[".repeat(50_000),
  '["'.repeat(20_000),
  `[${'"a",'.repeat(30_000)}"b"]`,
  '["a","b","c","d"]',
  '["a", 2]',
  "<final_answer>".repeat(10_000),
  "<final_answer></final_answer>",
  "<final_answer>x".repeat(5_000),
  "<search>".repeat(10_000) + "</search>",
  "<search>a</search><search>b</search>",
  "<search>q</search><end>",
  `<search>${"q".repeat(5_000)}</search>`,
  `<end${" ".repeat(50_000)}x`,
  `<${" ".repeat(50_000)}`,
  "```".repeat(20_000),
  "x".repeat(MAX_PARSE_CHARS + 1),
  "\ud800\udc00\ud800",
];

/**
 * `n` fuzz strings: the adversarial set, then seeded random ones (same seed, same strings).
 * @example for (const s of fuzzStrings(7)) parser(s);
 */
export function fuzzStrings(seed: number, n = 10_000): string[] {
  const rand = mulberry32(seed);
  const random = (): string => {
    const len = Math.floor(rand() * 40);
    let s = "";
    for (let i = 0; i < len; i++) {
      s += rand() < 0.7 ? PIECES[Math.floor(rand() * PIECES.length)] : String.fromCharCode(Math.floor(rand() * 0x3000));
    }
    return s;
  };
  return [...ADVERSARIAL, ...Array.from({ length: n - ADVERSARIAL.length }, random)];
}
