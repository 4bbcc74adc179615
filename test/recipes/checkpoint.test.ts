// The committed base model (models/base): it loads with loadHfModel + loadHfTokenizer, held-out
// entity words are 1–3 tokens each and are spelled alike in passages and targets, and greedy decoding reproduces the documented answer-role score
// on the fixed test subset (provenance.json → evaluation.subset) within two questions.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type BaseModelEvaluation, evaluateBaseModelDir, SUBSET_SIZE } from "../../recipes/base-model/evaluate-dir.js";
import { answerTarget, formatPassages, queriesTarget, searchTarget } from "../../examples/workflows/common/prompts.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";
import { loadHfTokenizer } from "../../src/engine/tokenizer/hf-tokenizer.js";
import { makeWorldTasks } from "../../src/envs/tasks/world/world-tasks.js";

const DIR = "models/base";
const provenance = JSON.parse(readFileSync(`${DIR}/provenance.json`, "utf8")) as {
  seed: number;
  parameters: number;
  evaluation: BaseModelEvaluation;
};
const TOLERANCE = 2 / SUBSET_SIZE;

describe("models/base", () => {
  it("loads as an HF Llama model with its BPE tokenizer", async () => {
    const { config, params } = await loadHfModel(DIR);
    const tok = await loadHfTokenizer(DIR);
    expect(config.architecture).toBe("llama");
    expect(config.numKvHeads).toBeLessThan(config.numHeads);
    expect(params.data.length).toBe(provenance.parameters);
    expect(config.vocabSize).toBe(tok.vocabSize);
    expect(tok.eosTokenIds).toEqual([tok.tokenToId("<|im_end|>")]);
  });

  it("spells held-out entity words in 1–3 tokens", async () => {
    const tok = await loadHfTokenizer(DIR);
    const tasks = makeWorldTasks(provenance.seed);
    const words = [...tasks.world.entities.values()].filter((e) => tasks.clusterSplit[e.cluster] === "test").flatMap((e) => e.words);
    const counts = words.map((w) => tok.encode(` ${w}`).length);
    expect(counts.filter((c) => c <= 3).length / counts.length).toBeGreaterThanOrEqual(0.95);
    expect(Math.max(...counts)).toBeLessThanOrEqual(4);
  });

  it("spells a held-out name in every copying target with the same tokens as in a passage", async () => {
    const tok = await loadHfTokenizer(DIR);
    const tasks = makeWorldTasks(provenance.seed);
    const names = [...tasks.world.entities.values()].filter((e) => tasks.clusterSplit[e.cluster] === "test").map((e) => e.name);
    const ids = (text: string) => `,${tok.encode(text, { addSpecialTokens: false }).join(",")},`;
    for (const name of names.slice(0, 50)) {
      const inPassage = ids(` ${name}`);
      expect(ids(formatPassages([`The birthplace of Ilo Fen is ${name}.`]))).toContain(inPassage);
      for (const target of [answerTarget(name), searchTarget(`${name} founder`), queriesTarget([`${name} founder`])])
        expect(ids(target)).toContain(inPassage);
    }
  });

  it("reproduces the documented held-out answer-role score on the fixed subset", async () => {
    const expected = provenance.evaluation.subset;
    expect(expected.n).toBe(SUBSET_SIZE);
    const got = (await evaluateBaseModelDir(DIR, provenance.seed, { full: false, formats: false })).subset;
    expect(Math.abs(got.em - expected.em)).toBeLessThanOrEqual(TOLERANCE);
    expect(Math.abs(got.f1 - expected.f1)).toBeLessThanOrEqual(TOLERANCE);
    expect(got.formatValid).toBeGreaterThanOrEqual(expected.formatValid - TOLERANCE);
  });
});
