// Scripted runs of MARFT math visit nodes in the right order: the pair retries only after a wrong
// answer, with the judge line appended to the history, at most 3 rounds; the single-agent variant
// does the same with one actor. Prompts come from the base model's builders.
import { describe, expect, it } from "vitest";
import { historyText } from "../../examples/workflows/marft-math/judge.js";
import { actorPrompt, JUDGE_INCORRECT, mathPrompt, reasonerPrompt } from "../../examples/workflows/common/prompts.js";
import { boxTask, mathScript, visited, walkMath } from "./math-fixtures.js";

const judgeLines = (messages: { content: string }[] | undefined) =>
  (messages ?? []).map((m) => m.content.split(JUDGE_INCORRECT).length - 1).reduce((a, b) => a + b, 0);

describe("MARFT math (dual agent): node order", () => {
  it("ends after one round when the first answer is right; no judge line anywhere", async () => {
    const { trajectory: t, calls } = await walkMath(mathScript(["12"]));
    expect(visited(t)).toEqual(["reasoner@1", "actor@1", "judge@1"]);
    expect(t.metrics).toMatchObject({ correct: 1, rounds: 1 });
    expect(calls.map((c) => judgeLines(c.messages))).toEqual([0, 0]);
    expect(calls[0].messages).toEqual(reasonerPrompt(boxTask.problem));
    expect(calls[1].messages).toEqual(actorPrompt(boxTask.problem, "Round 1: multiply boxes by pens per box."));
  });

  it("retries with the judge line only after a wrong answer", async () => {
    const { trajectory: t, calls } = await walkMath(mathScript(["7", "12"]));
    expect(visited(t)).toEqual(["reasoner@1", "actor@1", "judge@1", "reasoner@2", "actor@2", "judge@2"]);
    expect(t.metrics).toMatchObject({ correct: 1, rounds: 2 });
    expect(calls.map((c) => judgeLines(c.messages))).toEqual([0, 0, 1, 1]);
    const history = historyText(t.finalState.history);
    expect(history).toBe(`Plan: Round 1: multiply boxes by pens per box.\nAnswer: 3 * 4 = 7, so \\boxed{7}\n${JUDGE_INCORRECT}`);
    expect(calls[2].messages).toEqual(reasonerPrompt(boxTask.problem, history));
    expect(calls[3].messages).toEqual(actorPrompt(boxTask.problem, "Round 2: multiply boxes by pens per box.", history));
  });

  it("stops after 3 wrong rounds", async () => {
    const { trajectory: t, calls } = await walkMath(mathScript(["1", "2", "3", "4"]));
    expect(visited(t)).toEqual([1, 2, 3].flatMap((r) => [`reasoner@${r}`, `actor@${r}`, `judge@${r}`]));
    expect(t.metrics).toMatchObject({ correct: 0, rounds: 3, turnLimitHits: 0 });
    expect(calls.map((c) => judgeLines(c.messages))).toEqual([0, 0, 1, 1, 2, 2]);
  });

  it("treats a malformed actor output as a wrong answer and a format failure", async () => {
    const { trajectory: t } = await walkMath((req) => (req.role === "reasoner" ? "multiply" : req.turn === 1 ? "twelve" : "\\boxed{12}"));
    expect(visited(t)).toEqual(["reasoner@1", "actor@1", "judge@1", "reasoner@2", "actor@2", "judge@2"]);
    expect(t.records[1].parsed).toMatchObject({ ok: false });
    expect(t.finalState.history).toEqual([{ plan: "multiply", output: "twelve" }]);
  });
});

describe("MARFT math (single agent): node order", () => {
  it("one actor retries with its answer and the judge line as chat turns, at most 3 rounds", async () => {
    const { trajectory: t, calls } = await walkMath(mathScript(["5", "6", "7"]), "single");
    expect(visited(t)).toEqual([1, 2, 3].flatMap((r) => [`actor@${r}`, `judge@${r}`]));
    expect(t.metrics).toMatchObject({ correct: 0, rounds: 3 });
    expect(calls[0].messages).toEqual(mathPrompt(boxTask.problem));
    expect(calls[2].messages).toEqual([
      ...mathPrompt(boxTask.problem),
      { role: "assistant", content: "3 * 4 = 5, so \\boxed{5}" },
      { role: "user", content: JUDGE_INCORRECT },
      { role: "assistant", content: "3 * 4 = 6, so \\boxed{6}" },
      { role: "user", content: JUDGE_INCORRECT },
    ]);
  });

  it("stops at the first right answer", async () => {
    const { trajectory: t } = await walkMath(mathScript(["12"]), "single");
    expect(visited(t)).toEqual(["actor@1", "judge@1"]);
  });
});
