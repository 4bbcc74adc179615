// The committed QA-adapted model (models/base-qa): models/base's architecture and tokenizer, and
// greedy decoding reproduces the role figures its provenance records (100 dev questions walked as an
// ideal M-ASK episode with the reference retriever) within two questions.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { evaluateQaModel, type QaModelEval } from "../../recipes/base-model/qa-adapt.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";

const DIR = "models/base-qa";
const provenance = JSON.parse(readFileSync(`${DIR}/provenance.json`, "utf8")) as {
  seed: number;
  evaluation: QaModelEval;
  evaluationOfBase: QaModelEval;
};

describe("models/base-qa", () => {
  it("has models/base's architecture, size and tokenizer", async () => {
    const [qa, base] = await Promise.all([loadHfModel(DIR), loadHfModel("models/base")]);
    expect(qa.config).toEqual(base.config);
    expect(qa.params.data.length).toBe(base.params.data.length);
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      expect(readFileSync(`${DIR}/${f}`, "utf8")).toBe(readFileSync(`models/base/${f}`, "utf8"));
  });

  it("reproduces its recorded greedy role figures within two questions", async () => {
    const e = await evaluateQaModel(DIR, provenance.seed, provenance.evaluation.n);
    for (const k of ["summarizeExact", "summarizeNamesObject", "updateExact", "searchExact", "answerF1"] as const)
      expect(Math.abs(e[k] - provenance.evaluation[k])).toBeLessThanOrEqual(2 / e.n);
    // and it is the model that learned to copy: well above the base it started from
    const base = provenance.evaluationOfBase;
    expect(e.summarizeExact).toBeGreaterThan(base.summarizeExact + 0.1);
    expect(e.updateExact).toBeGreaterThan(base.updateExact + 0.2);
    expect(e.answerF1).toBeGreaterThan(base.answerF1 + 0.2);
  }, 300_000);
});
