// MARFT math's parsers: the reasoner's plan (no \boxed answer in it) and the actor's \boxed{} output
// are classified right, and both survive 10,000 seeded random and adversarial strings.
import { describe, expect, it } from "vitest";
import { actorParser, reasonerParser } from "../../examples/workflows/marft-math/roles.js";
import { fuzzParser, fuzzStrings } from "./fuzz-parsers.js";

describe("marft-math parsers", () => {
  it("actor: the last non-empty \\boxed{} is the answer, the text is kept", () => {
    expect(actorParser(" 3 * 4 = 12, so \\boxed{12}. ")).toEqual({
      ok: true,
      value: { text: "3 * 4 = 12, so \\boxed{12}.", answer: "12" },
    });
    expect(actorParser("\\boxed{1} no, \\boxed{\\frac{1}{2}}")).toMatchObject({ ok: true, value: { answer: "\\frac{1}{2}" } });
    expect(actorParser("the answer is 12")).toMatchObject({ ok: false });
    expect(actorParser("\\boxed{}")).toMatchObject({ ok: false });
  });

  it("reasoner: non-empty plan text that does not give a boxed answer", () => {
    expect(reasonerParser("Multiply the boxes by the items per box.")).toEqual({
      ok: true,
      value: "Multiply the boxes by the items per box.",
    });
    expect(reasonerParser("It is \\boxed{12}")).toMatchObject({ ok: false, reason: expect.stringMatching(/must not compute/) });
    expect(reasonerParser("   ")).toMatchObject({ ok: false });
  });

  it("no parser throws on 10,000 random and adversarial strings", () => {
    const inputs = fuzzStrings(9001, ["\\boxed{", "\\boxed", "\\frac{1}{2}", "The answer is", "12", "-3", "\\{", "\\}", "$"]);
    expect(inputs).toHaveLength(10_000);
    const t0 = performance.now();
    for (const [name, parser] of [
      ["reasoner", reasonerParser],
      ["actor", actorParser],
    ] as const) {
      const r = fuzzParser(name, parser, inputs);
      expect(r.problems).toEqual([]);
      expect(r.accepted).toBeGreaterThan(0);
    }
    expect(performance.now() - t0).toBeLessThan(20_000);
  });
});
