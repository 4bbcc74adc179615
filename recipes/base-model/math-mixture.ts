// The math adaptation mixture: what models/base-math trains on after models/base. The base model's
// math data was a one-line answer with no working, so it learned the format and no arithmetic
// (docs/notes/marft-math.md). Here every answer computes in written
// steps, the reasoner's plan names the operations, and drill text teaches the arithmetic itself.
// Train material only: the reference train split plus freshly drawn problems whose names and
// numbers match no dev/test problem (test/recipes/math-mixture.test.ts checks both).
import type { ChatMessage } from "maso";
import { makeArithmeticTasks, type SyntheticMathTask as MathTask, type MathStep, wordSet, createKeyedRng, type KeyedRng } from "maso/envs";

import {
  actorPrompt,
  clip,
  failedRound,
  JUDGE_INCORRECT,
  mathPlanTarget,
  mathPrompt,
  newestThatFit,
  reasonerPrompt,
  workedResult,
  type WorkedFormat,
  workedTarget,
} from "../../examples/workflows/common/prompts.js";
import { referenceMathTasks } from "../../examples/workflows/common/reference-tasks.js";

/** Kinds of examples in the math mixture. */
export const MATH_MIXTURE_KINDS = ["arithmetic", "worked", "math-plan"] as const;
export type MathMixtureKind = (typeof MATH_MIXTURE_KINDS)[number];

export type MathExample =
  | { kind: MathMixtureKind; parts: { text: string; scored: boolean }[] }
  | { kind: MathMixtureKind; messages: ChatMessage[]; response: string };

/** Examples per kind. */
export type MathMixtureCounts = Record<MathMixtureKind, number>;

export const DEFAULT_MATH_COUNTS: MathMixtureCounts = { arithmetic: 40000, worked: 8000, "math-plan": 3000 };

/**
 * What the marft-math workflow clips earlier rounds to (its HISTORY_BUDGET): the mixture shows
 * history exactly as the workflow will. math-mixture.test.ts checks the two stay equal.
 */
export const MATH_HISTORY_CLIP = { plan: 100, output: 80, total: 400 } as const;

/** A problem with its names replaced: equal skeletons are the same problem under other names. */
export const problemSkeleton = (t: MathTask): string => t.names.reduce((p, n) => p.split(n).join("_"), t.problem);

/** The problems the mixture may use: train split, plus fresh draws that share no name or skeleton with dev/test. */
export function mathTrainPool(seed: number, fresh: number): MathTask[] {
  const ref = referenceMathTasks(seed);
  const heldOut = [...ref.dev, ...ref.test];
  const heldOutWords = wordSet(heldOut.flatMap((t) => t.names));
  const heldOutSkeletons = new Set(heldOut.map(problemSkeleton));
  const clean = (t: MathTask) => !t.names.some((n) => heldOutWords.has(n.toLowerCase())) && !heldOutSkeletons.has(problemSkeleton(t));
  const extra = makeArithmeticTasks(`${seed}:math-adapt`, { count: fresh });
  return [...ref.train, ...extra.train, ...extra.dev, ...extra.test].filter(clean);
}

/** Equations per drill example. */
export const DRILL_EQUATIONS = 6;

type Equation = [a: number, op: MathStep["op"], b: number, result: number];

/**
 * One `plain` drill equation: a quarter single-digit facts (what multi-digit arithmetic is built
 * from), the rest in operand ranges close to the problems' (the first stage of models/base-math).
 */
function plainDrillEquation(rng: KeyedRng): Equation {
  const eq = (a: number, op: MathStep["op"], b: number, result: number): Equation => [a, op, b, result];
  const kind = rng.int(0, 3);
  if (rng.int(0, 3) === 0) {
    const [a, b] = [rng.int(0, 9), rng.int(0, 9)];
    return [eq(a, "+", b, a + b), eq(a + b, "-", b, a), eq(a, "*", b, a * b), eq(a * (b + 1), "/", b + 1, a)][kind];
  }
  if (kind === 0) {
    const [a, b] = [rng.int(0, 200), rng.int(0, 200)];
    return eq(a, "+", b, a + b);
  }
  if (kind === 1) {
    const b = rng.int(0, 150);
    const a = b + rng.int(0, 150);
    return eq(a, "-", b, a - b);
  }
  if (kind === 2) {
    const [a, b] = rng.int(0, 1) === 0 ? [rng.int(2, 30), rng.int(2, 12)] : [rng.int(2, 12), rng.int(2, 30)];
    return eq(a, "*", b, a * b);
  }
  const [q, k] = [rng.int(1, 40), rng.int(2, 9)];
  return eq(q * k, "/", k, q);
}

/** A number of 1–3 digits, the digit count drawn first so short and long operands are equally common. */
const digits123 = (rng: KeyedRng, min = 0): number => {
  const d = rng.int(1, 3);
  return rng.int(Math.max(min, d === 1 ? 0 : 10 ** (d - 1)), 10 ** d - 1);
};

/**
 * One `lsd` drill equation: a quarter single-digit facts, the rest covering every operation the
 * problem generator can ask for (sums and differences of up to three digits, a factor up to 99
 * times one up to 12, quotients up to 60).
 */
function lsdDrillEquation(rng: KeyedRng): Equation {
  const kind = rng.int(0, 3);
  if (rng.int(0, 3) === 0) {
    const [a, b] = [rng.int(0, 9), rng.int(0, 9)];
    return (
      [
        [a, "+", b, a + b],
        [a + b, "-", b, a],
        [a, "*", b, a * b],
        [a * (b + 1), "/", b + 1, a],
      ] as Equation[]
    )[kind];
  }
  if (kind === 0) {
    const [a, b] = [digits123(rng), digits123(rng)];
    return [a, "+", b, a + b];
  }
  if (kind === 1) {
    const a = digits123(rng, 1);
    const b = rng.int(0, a);
    return [a, "-", b, a - b];
  }
  if (kind === 2) {
    const [x, y] = [rng.int(2, 99), rng.int(2, 12)];
    return rng.int(0, 1) === 0 ? [x, "*", y, x * y] : [y, "*", x, x * y];
  }
  const [q, k] = [rng.int(1, 60), rng.int(2, 9)];
  return [q * k, "/", k, q];
}

/** A drill example: equations in a row, only their results trained (operands are random: nothing to learn). */
function drillExample(rng: KeyedRng, format: WorkedFormat): MathExample {
  const parts = Array.from({ length: DRILL_EQUATIONS }, (_, i) => {
    const [a, op, b, result] = format === "plain" ? plainDrillEquation(rng) : lsdDrillEquation(rng);
    return [
      { text: `${i === 0 ? "" : " "}${a} ${op} ${b} =`, scored: false },
      { text: workedResult({ a, op, b, result }, format), scored: true },
    ];
  }).flat();
  return { kind: "arithmetic", parts };
}

/** A plausible wrong worked answer: one step's result is off, and the steps after it follow from it. */
function wrongWorked(m: MathTask, rng: KeyedRng, format: WorkedFormat): string {
  const at = rng.int(0, m.steps.length - 1);
  const off = rng.pick([-1, 1]) * rng.int(1, 9);
  const out: MathStep[] = [];
  for (const [i, s] of m.steps.entries()) {
    const a = s.aStep === undefined ? s.a : out[s.aStep].result;
    const b = s.bStep === undefined ? s.b : out[s.bStep].result;
    const exact = { "+": a + b, "-": a - b, "*": a * b, "/": Math.round(a / b) }[s.op];
    out.push({ ...s, a, b, result: i === at ? exact + off : exact });
  }
  // a rounded division can land back on the right answer: the last result must stay wrong
  const last = out[out.length - 1];
  if (String(last.result) === m.answer) last.result += off;
  return workedTarget(out, format);
}

/** 1–2 failed rounds as the dual-agent history shows them: plan, wrong answer, judge line (clipped). */
const failedRounds = (m: MathTask, rng: KeyedRng, format: WorkedFormat): string => {
  const rounds = Array.from({ length: rng.int(1, 2) }, () =>
    failedRound(clip(mathPlanTarget(m.steps), MATH_HISTORY_CLIP.plan), clip(wrongWorked(m, rng, format), MATH_HISTORY_CLIP.output)),
  );
  return newestThatFit(rounds, (r) => r, MATH_HISTORY_CLIP.total).join("\n");
};

/** The actor's worked answer in every prompt shape the math workflows use (as mixture.ts's math kind). */
function workedExample(m: MathTask, i: number, rng: KeyedRng, format: WorkedFormat): MathExample {
  const response = workedTarget(m.steps, format);
  const plan = mathPlanTarget(m.steps);
  if (i % 4 === 0) return { kind: "worked", messages: mathPrompt(m.problem), response };
  if (i % 4 === 1) return { kind: "worked", messages: actorPrompt(m.problem, plan), response };
  if (i % 4 === 2) return { kind: "worked", messages: actorPrompt(m.problem, plan, failedRounds(m, rng, format)), response };
  const wrong = Array.from({ length: rng.int(1, 2) }, () => clip(wrongWorked(m, rng, format), MATH_HISTORY_CLIP.output));
  // kept as the single-agent prompt keeps them: each turn counted with its judge line
  const turns = newestThatFit(wrong, (w) => `${w}\n${JUDGE_INCORRECT}`, MATH_HISTORY_CLIP.total).flatMap((w): ChatMessage[] => [
    { role: "assistant", content: w },
    { role: "user", content: JUDGE_INCORRECT },
  ]);
  return { kind: "worked", messages: [...mathPrompt(m.problem), ...turns], response };
}

/**
 * Builds the math adaptation mixture for seed `seed` in the actor's working `format` (shuffled;
 * deterministic). models/base-math is three stages: `plain` from models/base, `lsd` from that, then `columns`.
 * @example const examples = buildMathMixture(42, DEFAULT_MATH_COUNTS, "lsd");
 */
export function buildMathMixture(
  seed: number,
  counts: MathMixtureCounts = DEFAULT_MATH_COUNTS,
  format: WorkedFormat = "lsd",
): MathExample[] {
  const rng = createKeyedRng(`math-mixture:${seed}`);
  const pool = rng.shuffle(mathTrainPool(seed, 6000));
  const examples: MathExample[] = [];
  for (let i = 0; i < counts.arithmetic; i++) examples.push(drillExample(rng, format));
  for (let i = 0; i < counts.worked; i++) examples.push(workedExample(pool[i % pool.length], i, rng, format));
  for (let i = 0; i < counts["math-plan"]; i++) {
    const m = pool[(i * 7 + 3) % pool.length];
    const history = i % 2 === 0 ? "" : failedRounds(m, rng, format);
    examples.push({ kind: "math-plan", messages: reasonerPrompt(m.problem, history), response: mathPlanTarget(m.steps) });
  }
  return rng.fork("order").shuffle(examples);
}
