import { describe, expect, it } from "vitest";
import { checkMath } from "../../math-checker/check-math.js";
import { wordSet } from "../names.js";
import { makeArithmeticTasks } from "./arithmetic-tasks.js";

describe("arithmetic word problems", () => {
  const s = makeArithmeticTasks(5);

  it("is deterministic for a seed", () => {
    expect(makeArithmeticTasks(5)).toEqual(s);
    expect(makeArithmeticTasks(6).train[0]).not.toEqual(s.train[0]);
  });

  it("has 1–3 operations and non-negative integer answers that the checker accepts", () => {
    expect(s.train.length + s.dev.length + s.test.length).toBe(1000);
    for (const split of [s.train, s.dev, s.test]) {
      expect(new Set(split.map((t) => t.ops))).toEqual(new Set([1, 2, 3]));
      for (const t of split) {
        expect(t.answer).toMatch(/^\d+$/);
        expect(checkMath(`so \\boxed{${t.answer}}`, t.answer).correct).toBe(true);
      }
    }
  });

  it("never shows test or dev names in training problems", () => {
    const trainWords = wordSet(s.train.map((t) => t.problem));
    for (const t of [...s.dev, ...s.test]) for (const n of t.names) expect(trainWords.has(n.toLowerCase())).toBe(false);
  });

  it("computes a hand-checked example correctly", () => {
    const t = s.train.find((x) => x.problem.includes("buys") && x.problem.includes("more. How many"))!;
    const [x, y] = t.problem.match(/\d+/g)!.map(Number);
    expect(Number(t.answer)).toBe(x + y);
  });
});

describe("arithmetic solution steps", () => {
  it("chain to the answer: each step is exact, the last result is the answer", () => {
    const s = makeArithmeticTasks(5);
    for (const t of [...s.train, ...s.dev, ...s.test]) {
      expect(t.steps.length).toBeGreaterThanOrEqual(t.ops);
      for (const st of t.steps) {
        const r = { "+": st.a + st.b, "-": st.a - st.b, "*": st.a * st.b, "/": st.a / st.b }[st.op];
        expect(st.result).toBe(r);
        expect(Number.isInteger(st.result) && st.result >= 0).toBe(true);
      }
      expect(String(t.steps[t.steps.length - 1].result)).toBe(t.answer);
    }
  });
});
