// Generates arithmetic word problems (1–3 operations, integer answers) from a seed. People in the
// problems come from per-split pools of invented names, so test names never appear in training.

import { createNameSource } from "../names.js";
import { createKeyedRng, type Rng } from "../../../rng.js";
import { cutSplits, DEFAULT_FRACTIONS, type MathTask, type Split, type SplitFractions, type Splits } from "../types.js";

/** Options for {@link makeArithmeticTasks}. */
export interface ArithmeticTaskOptions {
  /** Problems in total. Default 1000. */
  count?: number;
  fractions?: SplitFractions;
}

/** One operation of a problem's solution: `a op b = result`; `aStep`/`bStep` name the earlier step an operand is the result of. */
export interface MathStep {
  a: number;
  op: "+" | "-" | "*" | "/";
  b: number;
  result: number;
  aStep?: number;
  bStep?: number;
}

/** A generated problem also records the people it names and its solution, one operation per step. */
export type SyntheticMathTask = MathTask & { ops: number; names: string[]; steps: MathStep[] };

type Draw = { text: string; answer: number; ops: number; steps: MathStep[] };

/** An operand: a number from the problem, or the result of step i (`prev(i)`). */
type Operand = number | { step: number };
const prev = (step: number): Operand => ({ step });

const apply = {
  "+": (a: number, b: number) => a + b,
  "-": (a: number, b: number) => a - b,
  "*": (a: number, b: number) => a * b,
  "/": (a: number, b: number) => a / b,
};

/** Resolves `[a, op, b]` operations, in order, into steps. */
function solve(...ops: [Operand, MathStep["op"], Operand][]): MathStep[] {
  const out: MathStep[] = [];
  const value = (o: Operand) => (typeof o === "number" ? o : out[o.step].result);
  for (const [a, op, b] of ops) {
    const st: MathStep = { a: value(a), op, b: value(b), result: apply[op](value(a), value(b)) };
    if (typeof a !== "number") st.aStep = a.step;
    if (typeof b !== "number") st.bStep = b.step;
    out.push(st);
  }
  return out;
}

type Template = (rng: Rng, a: string, b: string, item: string) => Draw;

const ITEMS = ["apples", "marbles", "books", "stickers", "coins", "pencils", "shells", "cards", "stamps", "buttons"];

const TEMPLATES: readonly Template[] = [
  (r, a, _b, it) => {
    const [x, y] = [r.int(2, 90), r.int(2, 90)];
    return {
      text: `${a} has ${x} ${it}. ${a} buys ${y} more. How many ${it} does ${a} have now?`,
      answer: x + y,
      ops: 1,
      steps: solve([x, "+", y]),
    };
  },
  (r, a, b, it) => {
    const y = r.int(1, 60);
    const x = y + r.int(1, 60);
    return {
      text: `${a} had ${x} ${it} and gave ${y} of them to ${b}. How many ${it} does ${a} have left?`,
      answer: x - y,
      ops: 1,
      steps: solve([x, "-", y]),
    };
  },
  (r, a, _b, it) => {
    const [x, y] = [r.int(2, 12), r.int(2, 12)];
    return {
      text: `${a} buys ${x} boxes with ${y} ${it} in each box. How many ${it} does ${a} buy?`,
      answer: x * y,
      ops: 1,
      steps: solve([x, "*", y]),
    };
  },
  (r, a, _b, it) => {
    const [q, k] = [r.int(2, 15), r.int(2, 9)];
    return {
      text: `${a} shares ${q * k} ${it} equally among ${k} friends. How many ${it} does each friend get?`,
      answer: q,
      ops: 1,
      steps: solve([q * k, "/", k]),
    };
  },
  (r, a, _b, it) => {
    const [x, y, z] = [r.int(1, 40), r.int(2, 9), r.int(2, 12)];
    return {
      text: `${a} has ${x} ${it}. Then ${a} buys ${y} packs with ${z} ${it} in each pack. How many ${it} does ${a} have now?`,
      answer: x + y * z,
      ops: 2,
      steps: solve([y, "*", z], [x, "+", prev(0)]),
    };
  },
  (r, a, b, it) => {
    const y = r.int(1, 40);
    const [x, z] = [y + r.int(0, 40), r.int(1, 40)];
    return {
      text: `${a} had ${x} ${it}, gave ${y} to ${b}, and then found ${z} more. How many ${it} does ${a} have now?`,
      answer: x - y + z,
      ops: 2,
      steps: solve([x, "-", y], [prev(0), "+", z]),
    };
  },
  (r, a, _b) => {
    const [x, y] = [r.int(3, 20), r.int(2, 10)];
    const z = r.int(1, x * y - 1);
    return {
      text: `${a} earns ${x} dollars a day for ${y} days and then spends ${z} dollars. How many dollars does ${a} have left?`,
      answer: x * y - z,
      ops: 2,
      steps: solve([x, "*", y], [prev(0), "-", z]),
    };
  },
  (r, a, b, it) => {
    const k = r.int(2, 6);
    const [x, y] = [r.int(2, 8), r.int(2, 10)];
    const z = ((k - ((x * y) % k)) % k) + k * r.int(0, 3);
    return {
      text: `${a} has ${x} bags with ${y} ${it} in each bag. ${b} gives ${a} ${z} more ${it}, and ${a} then splits all of them equally into ${k} boxes. How many ${it} are in each box?`,
      answer: (x * y + z) / k,
      ops: 3,
      steps: solve([x, "*", y], [prev(0), "+", z], [prev(1), "/", k]),
    };
  },
  (r, a) => {
    const [x, y, z, w] = [r.int(5, 30), r.int(2, 7), r.int(5, 30), r.int(2, 7)];
    const total = x * y + z * w + r.int(0, 200);
    return {
      text: `A book has ${total} pages. ${a} reads ${x} pages a day for ${y} days, then ${z} pages a day for ${w} days. How many pages are left to read?`,
      answer: total - x * y - z * w,
      ops: 3,
      steps: solve([x, "*", y], [total, "-", prev(0)], [z, "*", w], [prev(1), "-", prev(2)]),
    };
  },
  (r, a, b, it) => {
    const [x, y, z] = [r.int(2, 9), r.int(2, 9), r.int(2, 6)];
    return {
      text: `${a} collects ${x} ${it} every week for ${y} weeks. ${b} collects ${z} times as many ${it} in total. How many ${it} do they have together?`,
      answer: x * y + z * x * y,
      ops: 3,
      steps: solve([x, "*", y], [z, "*", prev(0)], [prev(0), "+", prev(1)]),
    };
  },
];

/**
 * Draws `count` word problems for `seed`, split train/dev/test with disjoint name pools.
 * @example
 * makeArithmeticTasks(1).test[0]; // { problem: "Tharo has 12 marbles. …", answer: "31", ops: 1, ... }
 */
export function makeArithmeticTasks(seed: number | string, options: ArithmeticTaskOptions = {}): Splits<SyntheticMathTask> {
  const rng = createKeyedRng(`arith:${seed}`);
  const count = options.count ?? 1000;
  const fractions = options.fractions ?? DEFAULT_FRACTIONS;
  const sizes = cutSplits(
    Array.from({ length: count }, (_, i) => i),
    fractions,
  );
  const names = createNameSource(rng.fork("names"), [...ITEMS, "dollars", "pages", "book", "bags", "boxes"]);
  const out: Splits<SyntheticMathTask> = { train: [], dev: [], test: [] };
  for (const split of ["train", "dev", "test"] as const satisfies readonly Split[]) {
    const n = sizes[split].length;
    const pool = Array.from({ length: Math.max(4, Math.ceil(n / 4)) }, () => names.word(2, 3));
    const srng = rng.fork(split);
    for (let i = 0; i < n; i++) {
      const [a, b] = srng.shuffle(pool).slice(0, 2);
      const d = TEMPLATES[srng.int(0, TEMPLATES.length - 1)](srng, a, b, srng.pick(ITEMS));
      out[split].push({
        id: `arith-${split}-${i}`,
        problem: d.text,
        answer: String(d.answer),
        ops: d.ops,
        steps: d.steps,
        names: d.text.split(/\W+/).includes(b) ? [a, b] : [a],
      });
    }
  }
  return out;
}
