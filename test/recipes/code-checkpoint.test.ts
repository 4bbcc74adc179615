// The committed code-adapted model (models/base-code): it is models/base's architecture and tokenizer,
// and greedy decoding reproduces the coder figures its provenance records (150 test tasks, the coder
// after the learnt plan, through the sandboxed verifier) within two tasks.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type CodeModelEval, evaluateCodeModel } from "../../recipes/base-model/code-adapt.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";

const DIR = "models/base-code";
const provenance = JSON.parse(readFileSync(`${DIR}/provenance.json`, "utf8")) as {
  seed: number;
  evaluation: CodeModelEval;
  evaluationOfBase: CodeModelEval;
};

describe("models/base-code", () => {
  it("has models/base's architecture, size and tokenizer", async () => {
    const [code, base] = await Promise.all([loadHfModel(DIR), loadHfModel("models/base")]);
    expect(code.config).toEqual(base.config);
    expect(code.params.data.length).toBe(base.params.data.length);
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      expect(readFileSync(`${DIR}/${f}`, "utf8")).toBe(readFileSync(`models/base/${f}`, "utf8"));
  });

  it("reproduces its recorded greedy coder figures within two tasks", async () => {
    const e = await evaluateCodeModel(DIR, provenance.seed, provenance.evaluation.n);
    expect(Math.abs(e.allPass - provenance.evaluation.allPass)).toBeLessThanOrEqual(2 / e.n);
    expect(Math.abs(e.passRate - provenance.evaluation.passRate)).toBeLessThanOrEqual(2 / e.n);
    expect(Math.abs(e.formatValid - provenance.evaluation.formatValid)).toBeLessThanOrEqual(2 / e.n);
    // every level is represented, and the model learned: above the base it started from
    expect(Object.keys(e.byLevel).sort()).toEqual(["1", "2", "3"]);
    expect(e.allPass).toBeGreaterThan(provenance.evaluationOfBase.allPass);
  }, 180_000);
});
