// The tokenizer regex check: the pre-tokenizer patterns of real tokenizers (those shipped here, and
// GPT-2 / Llama 3 / DeepSeek / Tekken-style ones) pass; patterns known to backtrack exponentially or
// polynomially are refused, each with a reason; and the refusals are real: the refused patterns
// do take time that grows much faster than the text, the passed ones do not.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { qwen3TokenizerDir } from "./hf-tokenizer.js";
import { checkTokenizerRegexes, lenmlRegexSource, regexVerdict } from "./regex-safety.js";

const REPO = join(import.meta.dirname, "..", "..", "..");

const REAL: Record<string, string> = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  qwen: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  llama3:
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  tekken:
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  deepseek:
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  digits: "\\p{N}{1,3}",
  cjk: "[一-龥぀-ゟ゠-ヿ]+",
};

// exponential on "aaaa…!" (or its analogue), and one cubic on a long run of spaces
const HOSTILE = ["(a+)+$", "(\\w+\\s?)+$", "(a|a)*b", "(a*)*b", "([a-z]+)*@", "(\\d+)*\\.", "\\s*\\s*\\s*x"];

describe("regexVerdict", () => {
  it("passes the pre-tokenizer patterns of real tokenizers", () => {
    for (const [name, re] of Object.entries(REAL)) expect([name, regexVerdict(lenmlRegexSource(re))]).toEqual([name, null]);
  });

  it("passes every regex of the tokenizers shipped in models/ and of Qwen3", () => {
    const dirs = ["base", "base-code", "base-math", "base-qa"].map((d) => join(REPO, "models", d));
    for (const dir of [...dirs, qwen3TokenizerDir()]) {
      const json = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8"));
      expect(() => checkTokenizerRegexes(json, dir)).not.toThrow();
    }
  });

  it("refuses nested and overlapping repetition, inside lookarounds too, and backreferences", () => {
    for (const re of HOSTILE) expect([re, regexVerdict(re)?.reason]).toEqual([re, expect.stringMatching(/backtracking/)]);
    expect(regexVerdict("(?=(a+)+b)")?.reason).toMatch(/^inside a lookaround: .*exponential/);
    expect(regexVerdict("x(?!(a|a)*b)")?.reason).toMatch(/^inside a lookaround/);
    expect(regexVerdict("(a)\\1")?.reason).toMatch(/cannot verify \(backreference/);
    expect(regexVerdict("\\s*\\s*x")?.reason).toMatch(/polynomial/);
  });

  it("refuses many overlapping alternatives in a row, a loop-free blowup (2^30 paths)", () => {
    expect(regexVerdict(`${"(a|a)".repeat(30)}b`)?.reason).toMatch(/alternatives in a row can match the same text/);
    expect(regexVerdict(`${"(a|a)".repeat(4)}b`)).toBeNull();
    expect(regexVerdict(Array.from({ length: 100 }, (_, i) => `word${i}`).join("|"))).toBeNull();
  });

  it("reads (?i:…) groups, as newer V8 versions accept them, widening letters to every case", () => {
    expect(regexVerdict("(?i:'s|'t|'re)?\\p{L}+")).toBeNull();
    expect(regexVerdict("(?i:(a|A)+)+$")?.reason).toMatch(/exponential/);
  });

  it("passes unambiguous loops, and overlapping loops that end the match", () => {
    for (const re of ["(ab|cd)*e", "(a|ab)*c", "(?:\\r?\\n)+x", "a{1,1000}b", "\\s+$", "\\s*[\\r\\n]+", "a*a*"])
      expect([re, regexVerdict(re)]).toEqual([re, null]);
  });

  it("refuses only what is slow: a refused pattern's time grows far faster than its text, a passed one's does not", () => {
    const time = (re: RegExp, text: string) => {
      const t = performance.now();
      re.test(text);
      return performance.now() - t;
    };
    // (a+)+$: each 4 more characters multiply the work by about 16
    const slow = /(a+)+$/u;
    expect(time(slow, `${"a".repeat(22)}!`)).toBeGreaterThan(4 * time(slow, `${"a".repeat(16)}!`));
    const safe = new RegExp(lenmlRegexSource(REAL.qwen), "gu");
    const text = `${"word ".repeat(20_000)}\n\n  \t`;
    expect(time(safe, text)).toBeLessThan(200);
  });
});

describe("checkTokenizerRegexes", () => {
  it("names the file, the JSON path and the pattern", () => {
    const json = {
      pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "Split", pattern: { Regex: "(\\w+\\s?)+$" }, behavior: "Isolated" }] },
    };
    expect(() => checkTokenizerRegexes(json, "m/tokenizer.json")).toThrow(
      expect.objectContaining({
        code: "TOKENIZER_UNSAFE_REGEX",
        message: expect.stringContaining('m/tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex "(\\\\w+\\\\s?)+$" is refused'),
      }),
    );
  });

  it("checks normalizer and decoder Replace patterns too, and leaves String patterns alone", () => {
    const replace = (Regex: string) => ({ type: "Replace", pattern: { Regex }, content: " " });
    expect(() => checkTokenizerRegexes({ normalizer: replace("(a|a)*b") }, "t")).toThrow(/normalizer\.pattern\.Regex/);
    expect(() => checkTokenizerRegexes({ decoder: replace("(a*)*b") }, "t")).toThrow(/decoder\.pattern\.Regex/);
    expect(() => checkTokenizerRegexes({ normalizer: { type: "Replace", pattern: { String: "(a+)+" } } }, "t")).not.toThrow();
  });
});
