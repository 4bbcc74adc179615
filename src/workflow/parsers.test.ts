// Parser helpers: known cases are classified right, and no input (10,000 seeded random and
// adversarial strings, plus non-strings) makes any parser throw or hang.

import { describe, expect, it } from "vitest";
import { fuzzParser, fuzzStrings, LIBRARY_PIECES } from "../../test/workflows/fuzz-parsers.js";
import { boxedParser, jsonStringListParser, searchOrEndParser, tagParser, tagsParser, textParser } from "./parsers.js";
import type { ParseResult, Parser } from "./role.js";

const answer = tagParser("final_answer");
const search = searchOrEndParser();
const list = jsonStringListParser({ minItems: 1, maxItems: 3, maxItemLength: 40 });
const boxed = boxedParser();

const value = <T>(r: ParseResult<T>): T => {
  if (!r.ok) throw new Error(`expected ok, got: ${r.reason}`);
  return r.value;
};
const reason = <T>(r: ParseResult<T>): string => {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.value)}`);
  return r.reason;
};

describe("tagParser", () => {
  it("takes the last complete block, trimmed", () => {
    expect(value(answer("<final_answer> Paris </final_answer>"))).toBe("Paris");
    expect(value(answer("draft <final_answer>Lyon</final_answer> no wait <final_answer>Paris</final_answer>."))).toBe("Paris");
    expect(value(answer("<FINAL_ANSWER>x</final_answer >"))).toBe("x");
    expect(value(answer("<final_answer>a\nb</final_answer>"))).toBe("a\nb");
  });
  it("rejects missing, empty, unclosed and over-long blocks", () => {
    expect(reason(answer("Paris"))).toBe("no <final_answer>…</final_answer> block");
    expect(reason(answer("<final_answer>  </final_answer>"))).toBe("empty <final_answer> block");
    expect(reason(answer("<final_answer>Paris"))).toMatch(/no <final_answer>/);
    expect(value(tagParser("final_answer", { acceptUnclosed: true })("<final_answer>Paris"))).toBe("Paris");
    expect(reason(tagParser("a", { maxLength: 3 })("<a>abcd</a>"))).toMatch(/longer than 3/);
  });
  it("refuses invalid tag names at definition time", () => {
    expect(() => tagParser("a b")).toThrow(/invalid tag name/);
  });
});

describe("tagsParser", () => {
  const sections = tagsParser(["SOLUTION", "ANSWER"]);
  it("parses every section into an object keyed by the tag names as given", () => {
    const out = value(sections("Let me think.\n<solution> 3 + 4 = 7 </solution>\n<ANSWER>7</ANSWER>"));
    expect(out).toEqual({ SOLUTION: "3 + 4 = 7", ANSWER: "7" });
    expect(value(sections("<ANSWER>6</ANSWER> <SOLUTION>s</SOLUTION> <ANSWER>7</ANSWER>")).ANSWER).toBe("7");
  });
  it("names every missing section, and rejects empty and over-long ones", () => {
    expect(reason(sections("<ANSWER>7</ANSWER>"))).toBe("missing <SOLUTION>…</SOLUTION>");
    expect(reason(sections("7"))).toBe("missing <SOLUTION>…</SOLUTION>, <ANSWER>…</ANSWER>");
    expect(reason(sections("<SOLUTION>s</SOLUTION><ANSWER> </ANSWER>"))).toBe("empty <ANSWER> block");
    expect(reason(tagsParser(["A", "B"], { maxLength: 2 })("<A>ab</A><B>abc</B>"))).toBe("<B> content longer than 2 characters");
    expect(reason(sections(42 as unknown as string))).toBe("output is not a string");
  });
  it("optional sections may be absent; an unclosed last section counts only with acceptUnclosed", () => {
    const withNote = tagsParser(["ANSWER", "NOTE"], { optional: ["NOTE"] });
    expect(value(withNote("<ANSWER>7</ANSWER>"))).toEqual({ ANSWER: "7" });
    expect(reason(sections("<SOLUTION>s</SOLUTION><ANSWER>7"))).toBe("missing <ANSWER>…</ANSWER>");
    expect(value(tagsParser(["SOLUTION", "ANSWER"], { acceptUnclosed: true })("<SOLUTION>s</SOLUTION><ANSWER>7"))).toEqual({
      SOLUTION: "s",
      ANSWER: "7",
    });
  });
  it("refuses bad tag lists at definition time", () => {
    expect(() => tagsParser([])).toThrow(/at least one tag/);
    expect(() => tagsParser(["A", "a"])).toThrow(/listed twice/);
    expect(() => tagsParser(["A", "B C"])).toThrow(/invalid tag name/);
    expect(() => tagsParser(["A"], { optional: ["B" as "A"] })).toThrow(/not one of the tags/);
  });
});

describe("searchOrEndParser", () => {
  it("classifies search and end", () => {
    expect(value(search("I need more. <search> capital of France </search>"))).toEqual({ action: "search", query: "capital of France" });
    expect(value(search("Enough evidence. <end>"))).toEqual({ action: "end" });
    expect(value(search("<end/>"))).toEqual({ action: "end" });
    expect(value(search("< END >"))).toEqual({ action: "end" });
  });
  it("rejects both, neither, several and empty queries", () => {
    expect(reason(search("<search>q</search> <end>"))).toMatch(/both/);
    expect(reason(search("just text"))).toMatch(/neither/);
    expect(reason(search("<search>a</search><search>b</search>"))).toMatch(/2 <search> blocks/);
    expect(reason(search("<search> </search>"))).toMatch(/empty/);
    expect(reason(search("<search>unclosed"))).toMatch(/neither/);
    expect(reason(searchOrEndParser({ maxQueryLength: 5 })("<search>too long</search>"))).toMatch(/longer than 5/);
  });
});

describe("jsonStringListParser", () => {
  it("finds the list in plain JSON, code fences and prose", () => {
    expect(value(list('["a", "b"]'))).toEqual(["a", "b"]);
    expect(value(list('Here you go:\n```json\n[" who wrote Hamlet ", "when"]\n```\nThanks.'))).toEqual(["who wrote Hamlet", "when"]);
    expect(value(list('```\n["x"]\n```'))).toEqual(["x"]);
    expect(value(list('Sub-queries [see below]: ["q1", "q2 [with brackets]"] hope that helps [1].'))).toEqual(["q1", "q2 [with brackets]"]);
    expect(value(list('["a \\"quoted\\" ]", "b"]'))).toEqual(['a "quoted" ]', "b"]);
  });
  it("enforces item types, counts and lengths", () => {
    expect(reason(list("no list here"))).toBe("no JSON list found");
    expect(reason(list("[]"))).toMatch(/at least 1/);
    expect(reason(list('["a","b","c","d"]'))).toMatch(/at most 3/);
    expect(reason(list('["a", 2]'))).toBe("item 1 is not a string");
    expect(reason(list('["a", "  "]'))).toBe("item 1 is empty");
    expect(reason(list(`["${"x".repeat(41)}"]`))).toMatch(/longer than 40/);
    expect(reason(list('["unterminated", "list"'))).toBe("no JSON list found");
    expect(() => jsonStringListParser({ minItems: 3, maxItems: 1 })).toThrow(/bounds/);
  });
});

describe("boxedParser", () => {
  it("takes the last \\boxed{} with nested braces", () => {
    expect(value(boxed("so x = \\boxed{42}"))).toBe("42");
    expect(value(boxed("\\boxed{1} then \\boxed{\\frac{1}{2}}"))).toBe("\\frac{1}{2}");
    expect(value(boxed("\\boxed {  {a}{b{c}}  }"))).toBe("{a}{b{c}}");
    expect(value(boxed("\\boxed{\\{1,2\\}}"))).toBe("\\{1,2\\}");
  });
  it("rejects missing, unclosed and empty boxes", () => {
    expect(reason(boxed("42"))).toBe("no \\boxed{…}");
    expect(reason(boxed("\\boxed{\\frac{1}{2}"))).toBe("unclosed \\boxed{");
    expect(reason(boxed("\\boxed{ }"))).toBe("empty \\boxed{}");
    expect(reason(boxed("\\boxed 42"))).toMatch(/not followed/);
  });
});

describe("textParser", () => {
  it("accepts trimmed non-empty text", () => {
    expect(value(textParser()("  no useful information \n"))).toBe("no useful information");
    expect(reason(textParser()(" \n"))).toBe("empty output");
    expect(reason(textParser({ maxLength: 2 })("abc"))).toMatch(/longer/);
  });
});

describe("parsers never throw", () => {
  const parsers: [string, Parser<unknown>][] = [
    ["tag", answer],
    ["tag-unclosed", tagParser("final_answer", { acceptUnclosed: true })],
    ["tags", tagsParser(["final_answer", "search"], { optional: ["search"], acceptUnclosed: true })],
    ["search", search],
    ["json", list],
    ["json-unbounded", jsonStringListParser({ minItems: 0 })],
    ["boxed", boxed],
    ["text", textParser()],
  ];
  it("on 10,000 random and adversarial strings, and on non-strings", () => {
    const inputs = fuzzStrings(20240611, LIBRARY_PIECES);
    expect(inputs).toHaveLength(10_000);
    const t0 = performance.now();
    let accepted = 0;
    for (const [name, p] of parsers) {
      const r = fuzzParser(name, p, inputs);
      expect(r.problems).toEqual([]);
      accepted += r.accepted;
    }
    expect(accepted).toBeGreaterThan(0); // the generator does produce well-formed outputs too
    expect(performance.now() - t0).toBeLessThan(20_000);
  });
});
