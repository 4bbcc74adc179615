// Iterative search trained on the fresh world (fresh-train.ts): its training questions share no name
// with the reference world, each episode's retrieval searches its own world's documents, and on a
// reference task it walks exactly as workflow.ts (same passages, same records).
import { describe, expect, it } from "vitest";
import * as fresh from "../../examples/workflows/iterative-search/fresh-train.js";
import * as iterative from "../../examples/workflows/iterative-search/workflow.js";
import { FRESH_WORLD_SEED, retriever, tasks, WORLD_SEED } from "../../examples/workflows/common/world-qa.js";
import { runEpisodes, scriptedCaller, type Workflow } from "../../src/workflow/index.js";

const script = (q: string) => (req: { role: string }) =>
  req.role === "search"
    ? `<search>${q}</search>`
    : req.role === "answer" || req.role === "plan"
      ? "<final_answer>x</final_answer>"
      : "an item";

async function firstPassages<S extends object>(
  wf: Workflow<S>,
  state: S,
  query: string,
): Promise<{ passages: string[]; records: string[] }> {
  const [t] = await runEpisodes(wf, [{ id: "ep-0", state }], { caller: scriptedCaller(script(query)) });
  expect(t.status).toBe("done");
  const retrieve = t.records.find((r) => r.node === "retrieve")!;
  return { passages: retrieve.output as string[], records: t.records.map((r) => `${r.node}@${r.turn}`) };
}

describe("iterative search on the fresh world", () => {
  it("trains on fresh-world questions only and keeps the reference dev and test splits", () => {
    const names = new Set([...tasks.train, ...tasks.dev, ...tasks.test].flatMap((t) => t.entities ?? []));
    expect(fresh.tasks.train.length).toBeGreaterThan(1000);
    for (const t of fresh.tasks.train) {
      expect(t.id.startsWith(`w${FRESH_WORLD_SEED}-`)).toBe(true);
      for (const e of t.entities ?? []) expect(names.has(e)).toBe(false);
    }
    expect(fresh.tasks.dev).toBe(tasks.dev);
    expect(fresh.tasks.test).toBe(tasks.test);
    expect(fresh.initialState(fresh.tasks.train[0]).world).toBe(FRESH_WORLD_SEED);
    expect(fresh.initialState(tasks.test[0]).world).toBe(WORLD_SEED);
  });

  it("retrieves a fresh task's passages from its own world, which the reference index does not hold", async () => {
    const task = fresh.tasks.train[0];
    const subject = task.entities![0];
    const { passages } = await firstPassages(fresh.workflow, fresh.initialState(task), subject);
    expect(passages.length).toBeGreaterThan(0);
    expect(passages.some((p) => p.includes(subject))).toBe(true);
    const reference = retriever(WORLD_SEED).search(subject, 4);
    expect(reference.some((h) => h.text.includes(subject))).toBe(false);
  });

  it("walks a reference test task exactly as workflow.ts", async () => {
    const task = tasks.test[0];
    const query = task.entities![0];
    const a = await firstPassages(fresh.workflow, fresh.initialState(task), query);
    const b = await firstPassages(iterative.workflow, iterative.initialState(task), query);
    expect(a).toEqual(b);
    expect(a.passages.some((p) => p.includes(query))).toBe(true);
  });
});
