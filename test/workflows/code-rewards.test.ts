// Iterative coding's reward functions follow the paper rule: plan and code at turn t get R_t − R_{t−1}
// (R_0 = 0), reflect at turn t gets R_{t+1} − R_t, each plus its format term — on a hand-built
// trajectory (R = 0.25, 0.5, 1.0) and on a scripted run whose verifier really measured those rates.
import { describe, expect, it } from "vitest";
import type { CodingState, TurnResult } from "../../examples/workflows/iterative-coding/state.js";
import { rewards as completionRewards } from "../../examples/workflows/iterative-coding/completion.js";
import { rewards } from "../../examples/workflows/iterative-coding/workflow.js";
import { combineRewards } from "../../src/rewards/index.js";
import { codingTrajectory } from "../../src/rewards/test-trajectories.js";
import type { Trajectory } from "../../src/workflow/index.js";
import { addTask, CODE_BY_PASS_RATE, codingScript, walkCoding } from "./code-fixtures.js";

const R = [0.25, 0.5, 1] as const;

/** "node@turn" → combined reward of `fns` (default: workflow.ts's), rounded for float comparison. */
const byNodeTurn = (t: Trajectory<unknown>, fns = rewards) =>
  Object.fromEntries(
    combineRewards(t as Trajectory<CodingState>, addTask, fns).rewards.map((r) => [
      `${r.node}@${r.turn}`,
      Number((r.value as number).toFixed(10)),
    ]),
  );

const PAPER_RULE = {
  "plan@1": 0.25, // R_1 − R_0
  "code@1": 0.25,
  "reflect@1": 0.25, // R_2 − R_1
  "plan@2": 0.25,
  "code@2": 0.25,
  "reflect@2": 0.5, // R_3 − R_2
  "plan@3": 0.5,
  "code@3": 0.5,
};

describe("iterative coding rewards", () => {
  it("follow the paper rule on a hand-built 3-turn trajectory", () => {
    const t = codingTrajectory(3);
    const results: TurnResult[] = R.map((passRate, i) => ({ turn: i + 1, passRate, passed: 0, total: 4, feedback: "" }));
    t.finalState = { results } satisfies Pick<CodingState, "results">;
    expect(byNodeTurn(t)).toEqual(PAPER_RULE);
  });

  it("follow the paper rule on a scripted run whose verifier measured R = 0.25, 0.5, 1.0", async () => {
    const { trajectory: t } = await walkCoding(codingScript((turn) => CODE_BY_PASS_RATE[R[turn - 1]]));
    expect(t.finalState.results.map((r) => r.passRate)).toEqual([...R]);
    expect(byNodeTurn(t)).toEqual(PAPER_RULE);
  });

  it("add −1 × weight for a malformed output on top of its gain", async () => {
    // turn 1: no ```js block (R_1 = 0, format −1); turn 2: all pass
    const { trajectory: t } = await walkCoding(codingScript((turn) => (turn === 1 ? "return a + b" : CODE_BY_PASS_RATE[1])));
    const combined = combineRewards(t as Trajectory<CodingState>, addTask, rewards).rewards;
    const code1 = combined.find((r) => r.node === "code" && r.turn === 1)!;
    expect(code1.byKind).toEqual({ format: -1, turn: 0 });
    expect(byNodeTurn(t)).toEqual({ "plan@1": 0, "code@1": -1, "reflect@1": 1, "plan@2": 1, "code@2": 1 });
  });
});

describe("iterative coding with the completion reward (completion.ts)", () => {
  it("adds, on the same turns, the gain in all-pass: 1 to the turn whose code passes every test, and to the reflect before it", () => {
    const t = codingTrajectory(3);
    const results: TurnResult[] = R.map((passRate, i) => ({ turn: i + 1, passRate, passed: 0, total: 4, feedback: "" }));
    t.finalState = { results } satisfies Pick<CodingState, "results">;
    expect(byNodeTurn(t, completionRewards)).toEqual({
      ...PAPER_RULE,
      "reflect@2": PAPER_RULE["reflect@2"] + 1,
      "plan@3": 1.5,
      "code@3": 1.5,
    });
  });
});
