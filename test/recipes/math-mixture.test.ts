// The math adaptation mixture (models/base-math's data): train material only, arithmetic that is
// right, targets the MARFT roles accept and that fit their token budgets, history shown exactly as
// the workflow clips it.
import { describe, expect, it } from "vitest";
import { HISTORY_BUDGET } from "../../examples/workflows/marft-math/judge.js";
import { actorParser, actorRole, reasonerParser, reasonerRole } from "../../examples/workflows/marft-math/roles.js";
import {
  buildMathMixture,
  MATH_HISTORY_CLIP,
  MATH_MIXTURE_KINDS,
  type MathExample,
  problemSkeleton,
} from "../../recipes/base-model/math-mixture.js";
import { columnWorking, lsdDigits, mathPlanTarget, workedTarget } from "../../examples/workflows/common/prompts.js";
import { equationsIn } from "../../examples/workflows/marft-math/plan-arithmetic.js";
import { referenceMathTasks } from "../../examples/workflows/common/reference-tasks.js";
import { encodeExample } from "../../recipes/base-model/train-loop.js";
import { loadHfTokenizer } from "../../src/engine/tokenizer/hf-tokenizer.js";
import { wordSet } from "../../src/envs/tasks/names.js";

const SEED = 42;
const counts = { arithmetic: 200, worked: 800, "math-plan": 300 };
const mixture = buildMathMixture(SEED, counts);
const texts = mixture.flatMap((e) =>
  "parts" in e ? [e.parts.map((p) => p.text).join("")] : [...e.messages.map((m) => m.content), e.response],
);
const ref = referenceMathTasks(SEED);

type Op = "+" | "-" | "*" | "/";

/**
 * Checks every `a op b = (working) r.` of the mixture's drill text and worked answers: r is exact,
 * and the bracket (matched by `bracket`, its content the first group) is what `working` writes,
 * absent where it writes null. Returns how many equations it checked.
 */
function checkWorkedEquations(
  examples: readonly MathExample[],
  bracket: RegExp,
  working: (x: number, op: Op, y: number, r: number) => string | null,
): number {
  const eq = new RegExp(`(\\d+) ([-+*/]) (\\d+) = (?:${bracket.source} )?(\\d+)\\.`, "g");
  let checked = 0;
  for (const e of examples) {
    if (e.kind === "math-plan") continue;
    for (const [, a, op, b, w, r] of ("parts" in e ? e.parts.map((p) => p.text).join("") : e.response).matchAll(eq)) {
      const [x, y, o] = [Number(a), Number(b), op as Op];
      expect(Number(r)).toBe({ "+": x + y, "-": x - y, "*": x * y, "/": x / y }[o]);
      expect(w ?? null).toBe(working(x, o, y, Number(r)));
      checked++;
    }
  }
  return checked;
}

describe("math adaptation mixture", () => {
  it("names no dev/test person and holds no dev/test problem, not even under other names", () => {
    const heldOut = [...ref.dev, ...ref.test];
    const words = wordSet(texts);
    expect(heldOut.flatMap((t) => t.names).filter((n) => words.has(n.toLowerCase()))).toEqual([]);
    const all = texts.join("\n");
    const skeletons = heldOut.map(problemSkeleton);
    const seen = new Set(mixture.flatMap((e) => ("messages" in e ? [e.messages[0].content.split("\n")[1].replace(/^Problem: /, "")] : [])));
    expect(seen.size).toBeGreaterThan(500);
    const seenSkeletons = new Set([...seen].map((p) => p.replace(/\b[A-Z][a-z]+\b/g, "_")));
    expect(skeletons.filter((k) => seenSkeletons.has(k.replace(/\b[A-Z][a-z]+\b/g, "_")))).toEqual([]);
    expect(heldOut.filter((t) => all.includes(t.problem))).toEqual([]);
  });

  it("computes every drill equation and worked step correctly, digits least-significant first before the result", () => {
    // the bracket holds digits only: \d+, not a column's working
    expect(checkWorkedEquations(mixture, /\((\d+)\)/, (x, op, _y, r) => lsdDigits(op, x, r))).toBeGreaterThan(2000);
    // drill trains the results only: the operands are random
    for (const e of mixture.filter((x) => x.kind === "arithmetic"))
      if ("parts" in e) for (const p of e.parts) expect(p.scored).toBe(/^ (\(\d+\) )?\d+\.$/.test(p.text));
  });

  it("pads a difference's digits to the minuend's width and writes a quotient plain", () => {
    expect(lsdDigits("-", 105, 7)).toBe("700");
    expect(lsdDigits("+", 158, 67 + 158)).toBe("522");
    expect(lsdDigits("*", 27, 216)).toBe("612");
    expect(lsdDigits("/", 84, 12)).toBeNull();
    const steps = ref.train[0].steps;
    expect(workedTarget(steps, "plain")).toBe(
      `${steps.map((s) => `${s.a} ${s.op} ${s.b} = ${s.result}.`).join(" ")} The answer is \\boxed{${steps[steps.length - 1].result}}.`,
    );
  });

  it("works sums and differences column by column, units first, each column's digit following from the digits it restates", () => {
    expect(columnWorking(28, "+", 56)).toBe("8+6=14 2+5+1=8");
    expect(columnWorking(78, "+", 56)).toBe("8+6=14 7+5+1=13");
    expect(columnWorking(345, "+", 8)).toBe("5+8=13 4+0+1=5 3+0=3");
    expect(columnWorking(92, "-", 47)).toBe("12-7=5 9-4-1=4");
    expect(columnWorking(105, "-", 98)).toBe("15-8=7 10-9-1=0 1-0-1=0");
    expect(columnWorking(7, "-", 9)).toBeNull();
    expect(columnWorking(6, "*", 7)).toBeNull();
    // every column's own arithmetic is right, and its units digits, read from the last column, are the result
    for (let i = 0; i < 500; i++) {
      const [a, b] = [(i * 7919) % 1000, (i * 104729) % 1000];
      for (const [x, op, y] of [
        [a, "+", b],
        [Math.max(a, b), "-", Math.min(a, b)],
      ] as const) {
        const cols = (columnWorking(x, op, y) ?? "").split(" ").map((c) => c.match(/^(\d+)([-+])(\d)(?:[-+]1)?=(\d+)$/));
        for (const c of cols) expect(c).not.toBeNull();
        const sums = cols.map((c) => Number(c?.[4]));
        const read = sums
          .map((v, k) => (k === sums.length - 1 ? String(v) : String(v % 10)))
          .reverse()
          .join("");
        expect(Number(read)).toBe(op === "+" ? x + y : x - y);
      }
    }
    // the columns mixture: every drill equation and worked step right, worked in the columns format
    const columns = buildMathMixture(SEED, counts, "columns");
    const working = (x: number, op: Op, y: number, r: number) => columnWorking(x, op, y) ?? lsdDigits(op, x, r);
    expect(checkWorkedEquations(columns, /\(([^)]+)\)/, working)).toBeGreaterThan(2000);
    const steps = ref.train[0].steps;
    expect(equationsIn(workedTarget(steps, "columns"))).toEqual({ total: steps.length, exact: steps.length });
    expect(equationsIn("92 - 47 = (12-7=5 9-4-1=4) 35.")).toEqual({ total: 1, exact: 0 });
  });

  it("keeps the first stage's plain drill and targets", () => {
    const plain = buildMathMixture(SEED, counts, "plain");
    for (const e of plain) {
      const text = "parts" in e ? e.parts.map((p) => p.text).join("") : e.response;
      expect(text).not.toMatch(/\(\d+\)/);
    }
    expect(plain.filter((e) => e.kind === "arithmetic").length).toBe(counts.arithmetic);
  });

  it("writes targets the roles accept, with the task's answer, within the roles' token budgets", async () => {
    const tok = await loadHfTokenizer("models/base");
    for (const m of ref.train.slice(0, 200)) {
      const worked = actorParser(workedTarget(m.steps));
      expect(worked.ok && worked.value.answer).toBe(m.answer);
      expect(reasonerParser(mathPlanTarget(m.steps)).ok).toBe(true);
    }
    for (const e of [...mixture, ...buildMathMixture(SEED, counts, "columns")]) {
      const enc = encodeExample(tok, e, 512);
      const response = enc.scoreMask.reduce((a, b) => a + b, 0) - 1;
      if (e.kind === "worked") expect(response).toBeLessThanOrEqual(actorRole.maxNewTokens);
      if (e.kind === "math-plan") expect(response).toBeLessThanOrEqual(reasonerRole.maxNewTokens);
    }
  });

  it("shows failed rounds as the workflow clips them, each with a wrong answer", () => {
    expect(MATH_HISTORY_CLIP).toEqual(HISTORY_BUDGET);
    let rounds = 0;
    for (const e of mixture) {
      if (!("messages" in e)) continue;
      const answers = [...e.messages[0].content.matchAll(/\nAnswer: (.*)\nThe answer is incorrect\./g)].map((x) => x[1]);
      for (const a of answers) {
        expect(a.length).toBeLessThanOrEqual(MATH_HISTORY_CLIP.output);
        const gold = e.response.match(/\\boxed\{(\d+)\}/)?.[1];
        if (e.kind === "worked" && a.includes("\\boxed")) expect(a).not.toContain(`\\boxed{${gold}}`);
        rounds++;
      }
    }
    expect(rounds).toBeGreaterThan(100);
  });

  it("holds every kind in the counts asked, and is deterministic", () => {
    for (const k of MATH_MIXTURE_KINDS) expect(mixture.filter((e) => e.kind === k)).toHaveLength(counts[k]);
    expect(buildMathMixture(SEED, counts)).toEqual(mixture);
  });
});
