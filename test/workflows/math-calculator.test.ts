// The calculator oracle's arithmetic is exact on hand-checked plans and working, and the oracle
// workflow grades the plan's value: a right plan ends the episode in one round, a plan that cannot
// be evaluated is simply wrong (3 rounds), and the reasoner is the only role called.
import { describe, expect, it } from "vitest";
import { arithmeticRow } from "../../scripts/math-arithmetic.js";
import * as oracle from "../../examples/workflows/marft-math/calculator-oracle.js";
import { equationsIn, evaluatePlan, planAnswer } from "../../examples/workflows/marft-math/plan-arithmetic.js";
import type { MathState } from "../../examples/workflows/marft-math/state.js";
import { runEpisodes, scriptedCaller, type Trajectory } from "../../src/workflow/index.js";
import { boxTask, visited, walkMath } from "./math-fixtures.js";

describe("plan arithmetic", () => {
  it("evaluates statements in order, letters naming earlier results", () => {
    expect(evaluatePlan("A = 4 * 6. B = 12 + A.")).toBe(36);
    expect(evaluatePlan("A = 92 - 47.")).toBe(45);
    expect(evaluatePlan("A = 112 / 8. B = A - 3. C = B * B.")).toBe(121);
    expect(planAnswer("A = 7 / 2.")).toBe("3.5");
  });

  it("gives null for what it cannot evaluate", () => {
    expect(evaluatePlan("combine them in two steps")).toBeNull();
    expect(evaluatePlan("A = B + 3.")).toBeNull();
    expect(evaluatePlan("A = 5 / 0.")).toBeNull();
    expect(planAnswer("")).toBeNull();
  });

  it("counts the exact equations of the actor's working", () => {
    expect(equationsIn("92 - 47 = 33. The answer is \\boxed{27}.")).toEqual({ total: 1, exact: 0 });
    expect(equationsIn("4 * 6 = 24. 12 + 24 = 36. The answer is \\boxed{36}.")).toEqual({ total: 2, exact: 2 });
    expect(equationsIn("no working")).toEqual({ total: 0, exact: 0 });
    // the lsd working: the bracketed digits are working, the result is the number after them
    expect(equationsIn("92 - 47 = (54) 45. 45 * 2 = (09) 90. The answer is \\boxed{90}.")).toEqual({ total: 2, exact: 2 });
    expect(equationsIn("105 - 98 = (700) 17.")).toEqual({ total: 1, exact: 0 });
  });
});

async function walk(plans: readonly string[]) {
  const caller = scriptedCaller((req) => plans[req.turn - 1]);
  const [t] = await runEpisodes(oracle.workflow, [{ id: "ep", state: oracle.initialState(boxTask), taskId: boxTask.id }], { caller });
  return { t: t as Trajectory<MathState>, calls: caller.calls };
}

describe("calculator oracle workflow", () => {
  it("ends after one round when the plan's value is the answer", async () => {
    const { t, calls } = await walk(["A = 3 * 4."]);
    expect(visited(t)).toEqual(["reasoner@1", "actor@1", "judge@1"]);
    expect(t.metrics).toMatchObject({ correct: 1, rounds: 1 });
    expect(calls.map((c) => c.role)).toEqual(["reasoner"]);
  });

  it("retries after a wrong or unreadable plan, at most 3 rounds", async () => {
    const { t } = await walk(["A = 3 + 4.", "multiply them", "A = 3 * 5."]);
    expect(visited(t)).toEqual([1, 2, 3].flatMap((r) => [`reasoner@${r}`, `actor@${r}`, `judge@${r}`]));
    expect(t.metrics).toMatchObject({ correct: 0, rounds: 3 });
    expect(t.finalState.history.map((h) => h.output)).toEqual(["The answer is \\boxed{7}.", "", "The answer is \\boxed{15}."]);
  });
});

describe("math-arithmetic's decomposition", () => {
  it("splits plan errors from arithmetic errors on hand-built episodes", async () => {
    const right = await walkMath((r) => (r.role === "reasoner" ? "A = 3 * 4." : "3 * 4 = 12, so \\boxed{12}"));
    const badSum = await walkMath((r) => (r.role === "reasoner" ? "A = 3 * 4." : "3 * 4 = 13, so \\boxed{13}"));
    const badPlan = await walkMath((r) => (r.role === "reasoner" ? "A = 3 + 4." : "3 + 4 = 7, so \\boxed{7}"));
    const row = arithmeticRow(
      1,
      [right, badSum, badPlan].map((w) => w.trajectory),
    );
    expect(row).toMatchObject({ episodes: 3, correct: 1 / 3, planRight: 2 / 3, actorRightGivenPlan: 0.5 });
    // right: 1 exact; badSum: 3 rounds of a wrong product; badPlan: 3 exact sums
    expect(row.equations).toBe(7);
    expect(row.equationsExact).toBeCloseTo(4 / 7, 12);
  });
});
