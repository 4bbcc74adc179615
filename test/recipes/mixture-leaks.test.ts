// The base model's pretraining mixture never contains a dev/test entity: no held-out name word in
// any prompt, response or text, checked word by word (findEntityLeaks) and as whole names.
import { describe, expect, it } from "vitest";
import { buildMixture, exampleTexts, MIXTURE_KINDS } from "../../recipes/base-model/mixture.js";
import { referenceCodeTasks, referenceMathTasks } from "../../examples/workflows/common/reference-tasks.js";
import { findEntityLeaks } from "../../src/envs/tasks/world/world-tasks.js";

const SEED = 42; // the committed model's seed (models/base/provenance.json)
const mixture = buildMixture(SEED);
const texts = mixture.examples.flatMap(exampleTexts);

describe("base-model mixture", () => {
  it("has no held-out (dev or test) entity word anywhere", () => {
    expect(findEntityLeaks(mixture.tasks, texts)).toEqual([]);
  });

  it("holds no dev/test problem of the math and coding workflows' task sets", () => {
    const math = referenceMathTasks(SEED);
    const code = referenceCodeTasks(SEED);
    const heldOut = [...math.dev, ...math.test, ...code.dev, ...code.test].map((t) => t.problem);
    const trained = new Set([...math.train, ...code.train].map((t) => t.problem));
    expect(heldOut.filter((p) => trained.has(p))).toEqual([]);
    const all = texts.join("\n");
    expect(heldOut.filter((p) => all.includes(p))).toEqual([]);
    expect(trained.size).toBeGreaterThan(0);
    expect(texts.some((t) => [...trained].slice(0, 50).some((p) => t.includes(p)))).toBe(true);
  });

  it("has no held-out entity name as a whole name either", () => {
    const { world, clusterSplit } = mixture.tasks;
    const heldOut = [...world.entities.values()].filter((e) => clusterSplit[e.cluster] !== "train").map((e) => e.name);
    expect(heldOut.length).toBeGreaterThan(50);
    const all = texts.join("\n");
    // a held-out name may sit inside a longer invented word ("Bragai" in "Bragaimor"); that is no leak
    expect(heldOut.filter((n) => new RegExp(`(?<!\\p{L})${n}(?!\\p{L})`, "u").test(all))).toEqual([]);
  });

  it("holds every kind, counted, and is deterministic", () => {
    for (const k of MIXTURE_KINDS) expect(mixture.counts[k]).toBeGreaterThan(0);
    expect(mixture.examples).toHaveLength(Object.values(mixture.counts).reduce((a, b) => a + b, 0));
    expect(buildMixture(SEED, { ...zeroCounts(), copy: 50 }).examples.filter((e) => e.kind === "copy")).toEqual(
      buildMixture(SEED, { ...zeroCounts(), copy: 50 }).examples.filter((e) => e.kind === "copy"),
    );
  });

  it("answers in the reference roles' formats", () => {
    for (const e of mixture.examples.slice(0, 2000)) {
      if ("text" in e) continue;
      if (e.kind === "answer-fresh" || e.kind === "answer-train" || e.kind === "copy" || e.kind === "plan")
        expect(e.response).toMatch(/^<final_answer>[^<]+<\/final_answer>$/);
      if (e.kind === "search") expect(e.response).toMatch(/^(<end>|<search>[^<]+<\/search>)$/);
      if (e.kind === "decompose") expect(JSON.parse(e.response).length).toBeLessThanOrEqual(3);
      if (e.kind === "math") expect(e.response).toMatch(/\\boxed\{-?\d+\}/);
    }
  });
});

function zeroCounts() {
  return {
    copy: 0,
    "copy-text": 0,
    code: 0,
    reasoner: 0,
    update: 0,
    "answer-fresh": 0,
    "answer-train": 0,
    decompose: 0,
    extract: 0,
    summarize: 0,
    search: 0,
    plan: 0,
    math: 0,
  };
}
