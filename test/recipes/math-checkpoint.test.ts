// The committed math-adapted model (models/base-math): it is models/base's architecture and tokenizer,
// and greedy decoding reproduces the math figures its provenance records (100 test problems; the
// actor alone, after the reference plan, the reasoner's plan, one dual-agent round) within two problems.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { evaluateMathModel, type MathModelEval } from "../../recipes/base-model/math-adapt.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";

const DIR = "models/base-math";
const provenance = JSON.parse(readFileSync(`${DIR}/provenance.json`, "utf8")) as {
  seed: number;
  from: string;
  evaluation: MathModelEval;
  evaluationOfBase: MathModelEval;
};

describe("models/base-math", () => {
  it("has models/base's architecture, size and tokenizer", async () => {
    const [math, base] = await Promise.all([loadHfModel(DIR), loadHfModel("models/base")]);
    expect(math.config).toEqual(base.config);
    expect(math.params.data.length).toBe(base.params.data.length);
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      expect(readFileSync(`${DIR}/${f}`, "utf8")).toBe(readFileSync(`models/base/${f}`, "utf8"));
  });

  it("reproduces its recorded greedy math figures within two problems", async () => {
    const e = await evaluateMathModel(DIR, provenance.seed, provenance.evaluation.n);
    for (const k of ["solo", "withPlan", "planExact", "dual"] as const)
      expect(Math.abs(e[k] - provenance.evaluation[k])).toBeLessThanOrEqual(2 / e.n);
    // and it is the model that learned: better than the base it started from
    expect(e.withPlan).toBeGreaterThan(provenance.evaluationOfBase.withPlan);
  }, 120_000);
});
