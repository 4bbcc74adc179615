// The output-budget check on real tokenizers: the byte tokenizer (one token per byte) and the
// committed base models' BPE, where upper-case tags cost about a token per letter.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { loadTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import { tagParser } from "../../workflow/parsers.js";
import { defineRole } from "../../workflow/role.js";
import { exampleTokens, outputBudgetWarnings } from "./check-budgets.js";

const verifier = (example: string, maxNewTokens: number, stop?: string[]) =>
  defineRole<object, string>({
    name: "verifier",
    prompt: () => "p",
    parse: tagParser("verdict"),
    fallback: () => "",
    example,
    maxNewTokens,
    stop,
  });

describe("outputBudgetWarnings", () => {
  const byte = new Map([["verifier", { tokenizer: createByteTokenizer() }]]);

  it("counts the end-of-turn token unless a stop string ends the example", () => {
    const tok = createByteTokenizer();
    expect(exampleTokens(verifier("<verdict>ok</verdict>", 32), "<verdict>ok</verdict>", tok)).toEqual({ text: 21, total: 22 });
    expect(exampleTokens(verifier("<verdict>ok</verdict>", 32, ["</verdict>"]), "<verdict>ok</verdict>", tok)).toEqual({
      text: 21,
      total: 21,
    });
  });

  it("warns for a budget the example does not fit, with its count and the budget it needs", () => {
    const [w, ...rest] = outputBudgetWarnings([verifier("<VERDICT>correct</VERDICT>", 16)], byte);
    expect(rest).toEqual([]);
    expect(w.role).toBe("verifier");
    expect(w.message).toContain("takes 26 tokens of its model's tokenizer (27 with the end-of-turn token), over maxNewTokens 16");
    expect(w.message).toContain("can never parse");
    expect(w.hint).toContain("at least 27");
  });

  it("says a budget one token short stops the output at the limit instead", () => {
    const [w] = outputBudgetWarnings([verifier("<verdict>correct</verdict>", 26)], byte);
    expect(w.message).toContain("stops at the limit");
  });

  it("measures against the run config's sampling.maxNewTokens when it caps the role's budget", () => {
    const [w] = outputBudgetWarnings([verifier("<verdict>correct</verdict>", 64)], byte, 20);
    expect(w.message).toContain("over sampling.maxNewTokens 20 (the run config's cap)");
    expect(w.hint).toContain("raise sampling.maxNewTokens to at least 27");
    expect(outputBudgetWarnings([verifier("<verdict>correct</verdict>", 64)], byte, 100)).toEqual([]);
  });

  it("is silent for a role with room, a role without an example and a role with no known tokenizer", () => {
    const none = defineRole<object, string>({
      name: "verifier",
      prompt: () => "p",
      parse: tagParser("verdict"),
      fallback: () => "",
      maxNewTokens: 1,
    });
    expect(outputBudgetWarnings([verifier("<verdict>correct</verdict>", 27), none], byte)).toEqual([]);
    expect(outputBudgetWarnings([verifier("<VERDICT>correct</VERDICT>", 16)], new Map())).toEqual([]);
  });

  it("measures with the model's own tokenizer: upper-case tags cost more BPE tokens than lower-case ones", async () => {
    const tok = await loadTokenizer(join(import.meta.dirname, "../../../models/base-math"));
    const models = new Map([["verifier", { tokenizer: tok }]]);
    expect(exampleTokens(verifier("<VERDICT>correct</VERDICT>", 16), "<VERDICT>correct</VERDICT>", tok)).toEqual({ text: 20, total: 21 });
    expect(exampleTokens(verifier("<verdict>correct</verdict>", 16), "<verdict>correct</verdict>", tok)).toEqual({ text: 16, total: 17 });
    expect(outputBudgetWarnings([verifier("<VERDICT>correct</VERDICT>", 16)], models)).toHaveLength(1);
    expect(outputBudgetWarnings([verifier("<verdict>correct</verdict>", 32)], models)).toEqual([]);
  });
});
