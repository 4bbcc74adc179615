// Iterative coding's parsers: known outputs are classified right, and each of plan, code and reflect
// survives 10,000 seeded random and adversarial strings — every one a format failure or a valid output.
import { describe, expect, it } from "vitest";
import { codeTarget } from "../../examples/workflows/common/prompts.js";
import { jsBlockParser, planParser, reflectParser } from "../../examples/workflows/iterative-coding/roles.js";
import { fuzzParser, fuzzStrings } from "./fuzz-parsers.js";

describe("iterative-coding parsers", () => {
  it("code takes the last ```js (or untagged) block and refuses anything else", () => {
    const src = "function f(x) { return x + 1; }";
    expect(jsBlockParser(codeTarget(src))).toEqual({ ok: true, value: src });
    expect(jsBlockParser("```javascript\nA\n```\nthen\n```js\nB\n```")).toEqual({ ok: true, value: "B" });
    expect(jsBlockParser("```\nC\n```")).toEqual({ ok: true, value: "C" });
    expect(jsBlockParser("```python\nprint(1)\n```")).toMatchObject({ ok: false });
    expect(jsBlockParser(src)).toMatchObject({ ok: false, reason: "no closed ```js block" });
    expect(jsBlockParser("```js\nfunction f() {")).toMatchObject({ ok: false });
    expect(jsBlockParser("```js\n   \n```")).toMatchObject({ ok: false, reason: "empty ```js block" });
  });

  it("plan and reflect take non-empty text within their length limits", () => {
    expect(planParser("  1. loop over xs\n2. count  ")).toEqual({ ok: true, value: "1. loop over xs\n2. count" });
    expect(planParser(" ")).toMatchObject({ ok: false });
    expect(reflectParser("x".repeat(401))).toMatchObject({ ok: false });
  });

  it("no parser throws on 10,000 random and adversarial strings", () => {
    const inputs = fuzzStrings(4242, ["```js\n", "```javascript\n", "```\n", "function f(x) { return x; }", "return", ";", "\r\n", "js"]);
    expect(inputs).toHaveLength(10_000);
    const t0 = performance.now();
    for (const [name, parser] of [
      ["plan", planParser],
      ["code", jsBlockParser],
      ["reflect", reflectParser],
    ] as const) {
      const r = fuzzParser(name, parser, inputs);
      expect(r.problems).toEqual([]);
      expect(r.accepted).toBeGreaterThan(0); // the generator produces valid outputs too
    }
    expect(performance.now() - t0).toBeLessThan(20_000);
  });
});
