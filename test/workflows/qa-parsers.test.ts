// Every role parser of the three world-QA workflows, on 10,000 seeded random and adversarial strings:
// none throws, and each result is either a format failure with a reason or a value of the role's type.
// The random strings are built mostly from the tokens the roles' formats are made of.
import { describe, expect, it } from "vitest";
import * as iterative from "../../examples/workflows/iterative-search/workflow.js";
import * as qd from "../../examples/workflows/qd-retrieve-answer/workflow.js";
import * as rea from "../../examples/workflows/retrieve-extract-answer/workflow.js";
import type { Role } from "../../src/workflow/index.js";
import { fuzzParser, fuzzStrings, LIBRARY_PIECES } from "./fuzz-parsers.js";

const cleanText = (max: number) => (v: unknown) => typeof v === "string" && v !== "" && v === v.trim() && v.length <= max;
const anyText = (v: unknown) => typeof v === "string" && v !== "" && v === v.trim();
const subQueries = (v: unknown) => Array.isArray(v) && v.length >= 1 && v.length <= 3 && v.every(cleanText(200));
const searchAction = (v: unknown) => {
  const a = v as { action?: string; query?: unknown };
  return (a?.action === "end" && Object.keys(a).length === 1) || (a?.action === "search" && cleanText(200)(a.query));
};

// [name, role, is this a valid value of the role's type?]
const ROLES: [string, Role<never, unknown>, (v: unknown) => boolean][] = [
  ["qd/decompose", qd.decompose, subQueries],
  ["qd/answer", qd.answer, anyText],
  ["rea/decompose", rea.decompose, subQueries],
  ["rea/extract", rea.extract, cleanText(400)],
  ["rea/answer", rea.answer, anyText],
  ["m-ask/plan", iterative.plan, anyText],
  ["m-ask/search", iterative.search, searchAction],
  ["m-ask/summarize", iterative.summarize, cleanText(400)],
  ["m-ask/update", iterative.update, cleanText(400)],
  ["m-ask/answer", iterative.answer, anyText],
];

/** The world-QA formats are built on the library parsers; these are their other tokens and entity names. */
const PIECES = [...LIBRARY_PIECES, "< END >", "no useful information", "{}", "Lizal", "Kapas Loudrushum"];

describe("world-QA role parsers survive fuzzing", () => {
  const inputs = fuzzStrings(20250101, PIECES);

  it("has 10,000 inputs", () => {
    expect(inputs).toHaveLength(10_000);
  });

  for (const [name, role, valid] of ROLES) {
    it(`${name}: no problem, and some inputs well-formed`, () => {
      const r = fuzzParser(name, role.parse, inputs, valid);
      expect(r.problems.slice(0, 5)).toEqual([]);
      expect(r.accepted).toBeGreaterThan(10);
    });
  }
});
