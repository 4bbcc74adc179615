// Scripted runs (no model) of the three world-QA workflows through the real retriever: nodes are
// visited in the right order, fan-out branches and loop turns are numbered right, and format
// failures take the documented fallback path.
import { describe, expect, it } from "vitest";
import * as copyOracle from "../../examples/workflows/iterative-search/copy-oracle.js";
import * as iterative from "../../examples/workflows/iterative-search/workflow.js";
import * as qd from "../../examples/workflows/qd-retrieve-answer/workflow.js";
import * as rea from "../../examples/workflows/retrieve-extract-answer/workflow.js";
import { tasks } from "../../examples/workflows/common/world-qa.js";
import { type RoleCallRequest, runEpisodes, scriptedCaller, type Trajectory, type Workflow } from "../../src/workflow/index.js";

const task = tasks.train[0];
// queries the BM25 index has hits for: the question, and the name of its first entity
const [q1, q2] = [task.question, task.entities![0]];

async function walk<S extends object>(wf: Workflow<S>, state: S, script: (req: RoleCallRequest) => string) {
  const caller = scriptedCaller(script);
  const [t] = await runEpisodes(wf, [{ id: "ep-0", state }], { caller });
  expect(t.status).toBe("done");
  return { t, calls: caller.calls };
}

const order = (t: Trajectory<unknown>) => t.records.map((r) => `${r.node}@${r.turn}${r.branch === null ? "" : `/${r.branch}`}`);
const final = (a: string) => `<final_answer>${a}</final_answer>`;

describe("QD-Retrieve-Answer", () => {
  it("decompose → one retrieval per sub-query → join → answer", async () => {
    const { t, calls } = await walk(qd.workflow, qd.initialState(task), (req) =>
      req.role === "decompose" ? JSON.stringify([q1, q2]) : final("Lizal"),
    );
    expect(order(t)).toEqual(["decompose@0", "retrieve@0/0", "retrieve@0/1", "join@0", "answer@0"]);
    expect(t.records.filter((r) => r.node === "retrieve").map((r) => r.toolResults[0].input)).toEqual([q1, q2]);
    const passages = t.finalState.passages;
    expect(passages.length).toBeGreaterThan(0);
    expect(passages.length).toBeLessThanOrEqual(8);
    expect(new Set(passages).size).toBe(passages.length);
    expect(calls.find((c) => c.role === "answer")!.messages![0].content).toContain(passages[0]);
    expect(t.finalState.answer).toBe("Lizal");
  });

  it("a malformed decompose retrieves the question itself", async () => {
    const { t } = await walk(qd.workflow, qd.initialState(task), (req) => (req.role === "decompose" ? "no list" : final("x")));
    expect(order(t)).toEqual(["decompose@0", "retrieve@0/0", "join@0", "answer@0"]);
    expect(t.records[1].toolResults[0].input).toBe(task.question);
  });
});

describe("Retrieve-Extract-Answer", () => {
  it("each branch retrieves then extracts; the join composes the useful evidence for answer", async () => {
    const { t, calls } = await walk(rea.workflow, rea.initialState(task), (req) => {
      if (req.role === "decompose") return JSON.stringify([q1, q2, task.answers[0]]);
      if (req.role === "extract")
        return req.messages![0].content.includes(`Query: ${q2}\n`) ? "no useful information" : `evidence ${req.visit}`;
      return final("Lizal");
    });
    expect(order(t)).toEqual([
      "decompose@0",
      "retrieve@0/0",
      "extract@0/0",
      "retrieve@0/1",
      "extract@0/1",
      "retrieve@0/2",
      "extract@0/2",
      "join@0",
      "answer@0",
    ]);
    const firstExtract = calls.find((c) => c.role === "extract")!.messages![0].content;
    expect(firstExtract).toContain(`Query: ${q1}`);
    expect(firstExtract).toContain((t.records[1].output as string[])[0]);
    expect(t.finalState.evidence).toEqual(["evidence 0", "evidence 2"]);
  });

  it("tells the answer role when no branch found evidence", async () => {
    const { t } = await walk(rea.workflow, rea.initialState(task), (req) =>
      req.role === "decompose" ? '["q"]' : req.role === "extract" ? "" : final("x"),
    );
    expect(t.finalState.evidence).toEqual(["no useful information"]);
  });
});

describe("iterative search (M-ASK)", () => {
  const script =
    (endAt: number, extra: (req: RoleCallRequest) => string | undefined = () => undefined) =>
    (req: RoleCallRequest): string => {
      const override = extra(req);
      if (override !== undefined) return override;
      if (req.role === "plan") return final("guess");
      if (req.role === "search") return req.turn >= endAt ? "<end>" : `<search>query ${req.turn}</search>`;
      if (req.role === "summarize") return `evidence ${req.turn}`;
      if (req.role === "update") return `fact ${req.turn}`;
      return final(`answer ${req.turn}`);
    };
  const turn = (t: number) => [`search@${t}`, `retrieve@${t}`, `summarize@${t}`, `update@${t}`, `answer@${t}`];

  it("plan, then turns of search → retrieve → summarize → update → answer until <end>", async () => {
    const { t, calls } = await walk(iterative.workflow, iterative.initialState(task), script(3));
    expect(order(t)).toEqual(["plan@0", ...turn(1), ...turn(2), "search@3"]);
    expect(t.finalState.answers).toEqual(["guess", "answer 1", "answer 2"]);
    expect(t.finalState.answer).toBe("answer 2");
    expect(t.finalState.knowledge).toEqual(["fact 1", "fact 2"]);
    // the knowledge grows turn by turn and the answer role reads it
    expect(calls.filter((c) => c.role === "search").map((c) => c.messages![0].content.includes("- fact 1"))).toEqual([false, true, true]);
    expect(calls.filter((c) => c.role === "answer").at(-1)!.messages![0].content).toContain("[2] fact 2");
  });

  it("stops after T = 3 turns without <end>", async () => {
    const { t } = await walk(iterative.workflow, iterative.initialState(task), script(99));
    expect(order(t)).toEqual(["plan@0", ...turn(1), ...turn(2), ...turn(3)]);
    expect(t.metrics.turnLimitHits).toBe(1);
    expect(t.finalState.answers).toHaveLength(4);
  });

  it("a malformed search searches the question; a malformed answer keeps the previous one", async () => {
    const bad = (req: RoleCallRequest) => (req.turn === 1 && (req.role === "search" || req.role === "answer") ? "???" : undefined);
    const { t } = await walk(iterative.workflow, iterative.initialState(task), script(2, bad));
    expect(order(t)).toEqual(["plan@0", ...turn(1), "search@2"]);
    expect(t.records[2].toolResults[0].input).toBe(task.question);
    expect(t.finalState.answers).toEqual(["guess", "guess"]);
  });

  it("the copy oracle walks the same graph with the top passage as evidence and knowledge", async () => {
    // queries with BM25 hits, so every turn retrieves passages to copy
    const real = (req: RoleCallRequest) =>
      req.role === "search" && req.turn < 3 ? `<search>${req.turn === 1 ? q1 : q2}</search>` : undefined;
    const { t, calls } = await walk(copyOracle.workflow, copyOracle.initialState(task), script(3, real));
    expect(order(t)).toEqual(["plan@0", ...turn(1), ...turn(2), "search@3"]);
    expect(calls.map((c) => c.role)).not.toContain("summarize");
    const top = t.records.filter((r) => r.node === "retrieve").map((r) => (r.toolResults[0].value as string[])[0]);
    expect(top.every((p) => typeof p === "string" && p.length > 0)).toBe(true);
    expect(t.finalState.knowledge).toEqual(top);
    expect(calls.filter((c) => c.role === "answer").at(-1)!.messages![0].content).toContain(top[1]);
  });
});
