// The easier levels of the code task family: level 1 is one expression over the input, level 2 one
// pass over an array or string. Each has one or two parameters drawn from wide ranges, so the
// held-out splits ask for the same shapes with parameter values the training split never shows.
// Level 3 is the first family (templates.ts): several rules, state carried across a loop.

import type { Rng } from "../../../rng.js";
import type { CodeInstance, CodeTemplate } from "./templates.js";

const repeat = <T>(n: number, f: () => T): T[] => Array.from({ length: n }, f);
const ints = (rng: Rng, n: number, lo: number, hi: number): number[][] => repeat(n, () => [rng.int(lo, hi)]);
const list = (rng: Rng, lo: number, hi: number): number[] => repeat(rng.int(1, 7), () => rng.int(lo, hi));
const WORDS = ["apple", "river", "stone", "cloud", "night", "lamp", "sugar", "zebra", "ocean", "tiger", "moss", "quiet", "a", "to"];
const words = (rng: Rng): string => repeat(rng.int(1, 6), () => rng.pick(WORDS)).join(" ");
const signed = (k: number): string => (k < 0 ? `minus ${-k}` : `plus ${k}`);

/** One expression-bodied instance: `function entry(arg) { return body; }`. */
function expression(
  key: string,
  entry: string,
  arg: string,
  problem: string,
  body: string,
  solve: CodeInstance["solve"],
  inputs: unknown[][],
): CodeInstance {
  return {
    key,
    entry,
    problem,
    reference: `function ${entry}(${arg}) { return ${body}; }`,
    solve,
    inputs: inputs as CodeInstance["inputs"],
  };
}

const addConst: CodeTemplate = (rng) => {
  const k = rng.int(-99, 99);
  return expression(
    `addConst:${k}`,
    "addConst",
    "n",
    `Write a JavaScript function \`addConst(n)\` that returns the number n ${signed(k)}.`,
    k < 0 ? `n - ${-k}` : `n + ${k}`,
    ((n: number) => n + k) as CodeInstance["solve"],
    [[0], ...ints(rng, 5, -50, 200)],
  );
};

const linear: CodeTemplate = (rng) => {
  const a = rng.int(2, 12);
  const b = rng.int(-30, 30);
  return expression(
    `linear:${a}:${b}`,
    "linear",
    "n",
    `Write a JavaScript function \`linear(n)\` that returns ${a} times n, ${signed(b)}.`,
    b < 0 ? `${a} * n - ${-b}` : `${a} * n + ${b}`,
    ((n: number) => a * n + b) as CodeInstance["solve"],
    [[0], [1], ...ints(rng, 4, -20, 50)],
  );
};

const isMultiple: CodeTemplate = (rng) => {
  const k = rng.int(2, 60);
  return expression(
    `isMultiple:${k}`,
    "isMultiple",
    "n",
    `Write a JavaScript function \`isMultiple(n)\` that returns true if the integer n is divisible by ${k}, and false otherwise.`,
    `n % ${k} === 0`,
    ((n: number) => n % k === 0) as CodeInstance["solve"],
    [[0], [k], [k + 1], [k * 3], ...ints(rng, 3, 1, 500)],
  );
};

const remainder: CodeTemplate = (rng) => {
  const k = rng.int(2, 60);
  return expression(
    `remainder:${k}`,
    "remainder",
    "n",
    `Write a JavaScript function \`remainder(n)\` that returns the remainder of the non-negative integer n divided by ${k}.`,
    `n % ${k}`,
    ((n: number) => n % k) as CodeInstance["solve"],
    [[0], [k], [k + 1], ...ints(rng, 4, 1, 999)],
  );
};

const capAt: CodeTemplate = (rng) => {
  const k = rng.int(-40, 99);
  return expression(
    `capAt:${k}`,
    "capAt",
    "n",
    `Write a JavaScript function \`capAt(n)\` that returns n, or ${k} if n is greater than ${k}.`,
    `Math.min(n, ${k})`,
    ((n: number) => Math.min(n, k)) as CodeInstance["solve"],
    [[k], [k + 1], [k - 1], ...ints(rng, 4, -60, 150)],
  );
};

const inRange: CodeTemplate = (rng) => {
  const lo = rng.int(-20, 40);
  const hi = lo + rng.int(1, 40);
  return expression(
    `inRange:${lo}:${hi}`,
    "inRange",
    "n",
    `Write a JavaScript function \`inRange(n)\` that returns true if ${lo} <= n <= ${hi}, and false otherwise.`,
    `n >= ${lo} && n <= ${hi}`,
    ((n: number) => n >= lo && n <= hi) as CodeInstance["solve"],
    [[lo], [hi], [lo - 1], [hi + 1], ...ints(rng, 3, lo - 10, hi + 10)],
  );
};

const wrapText: CodeTemplate = (rng) => {
  const [left, right] = rng.pick([
    ["(", ")"],
    ["[", "]"],
    ["<", ">"],
    ["{", "}"],
    ["*", "*"],
    ["_", "_"],
    ["#", "#"],
  ]);
  const n = rng.int(1, 4);
  const [l, r] = [left.repeat(n), right.repeat(n)];
  return expression(
    `wrapText:${l}:${r}`,
    "wrapText",
    "s",
    `Write a JavaScript function \`wrapText(s)\` that returns the string s with "${l}" before it and "${r}" after it.`,
    `${JSON.stringify(l)} + s + ${JSON.stringify(r)}`,
    ((s: string) => l + s + r) as CodeInstance["solve"],
    [[""], ...repeat(4, () => [words(rng)])],
  );
};

const lastChars: CodeTemplate = (rng) => {
  const k = rng.int(1, 12);
  return expression(
    `lastChars:${k}`,
    "lastChars",
    "s",
    `Write a JavaScript function \`lastChars(s)\` that returns the last ${k} characters of the string s (all of s if it is shorter).`,
    `s.slice(-${k})`,
    ((s: string) => s.slice(-k)) as CodeInstance["solve"],
    [[""], ["ab"], ...repeat(4, () => [words(rng)])],
  );
};

/** Level 1: one expression over the input. */
export const EXPRESSION_TEMPLATES: readonly CodeTemplate[] = [addConst, linear, isMultiple, remainder, capAt, inRange, wrapText, lastChars];

const sumAbove: CodeTemplate = (rng) => {
  const k = rng.int(-30, 60);
  const solve = (xs: number[]) => xs.filter((x) => x > k).reduce((s, x) => s + x, 0);
  return {
    key: `sumAbove:${k}`,
    entry: "sumAbove",
    problem: `Write a JavaScript function \`sumAbove(xs)\` that returns the sum of the numbers in the array xs that are greater than ${k} (0 if there are none).`,
    reference: `function sumAbove(xs) { let s = 0; for (const x of xs) if (x > ${k}) s += x; return s; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], [[k, k + 1]], ...repeat(5, () => [list(rng, k - 40, k + 40)])],
  };
};

const countMultiples: CodeTemplate = (rng) => {
  const k = rng.int(2, 40);
  const solve = (xs: number[]) => xs.filter((x) => x % k === 0).length;
  return {
    key: `countMultiples:${k}`,
    entry: "countMultiples",
    problem: `Write a JavaScript function \`countMultiples(xs)\` that returns how many numbers in the array xs are divisible by ${k}.`,
    reference: `function countMultiples(xs) { let c = 0; for (const x of xs) if (x % ${k} === 0) c++; return c; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], [[k, k + 1, 2 * k]], ...repeat(5, () => [list(rng, 1, 5 * k)])],
  };
};

const addToEach: CodeTemplate = (rng) => {
  const k = rng.int(-60, 60) || 61;
  const solve = (xs: number[]) => xs.map((x) => x + k);
  return {
    key: `addToEach:${k}`,
    entry: "addToEach",
    problem: `Write a JavaScript function \`addToEach(xs)\` that returns a new array with ${k < 0 ? `${-k} subtracted from` : `${k} added to`} every number of the array xs.`,
    reference: `function addToEach(xs) { return xs.map((x) => x ${k < 0 ? `- ${-k}` : `+ ${k}`}); }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], ...repeat(5, () => [list(rng, -50, 50)])],
  };
};

const keepBelow: CodeTemplate = (rng) => {
  const k = rng.int(-30, 60);
  const solve = (xs: number[]) => xs.filter((x) => x < k);
  return {
    key: `keepBelow:${k}`,
    entry: "keepBelow",
    problem: `Write a JavaScript function \`keepBelow(xs)\` that returns the numbers of the array xs that are less than ${k}, in their original order.`,
    reference: `function keepBelow(xs) { return xs.filter((x) => x < ${k}); }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], [[k, k - 1]], ...repeat(5, () => [list(rng, k - 30, k + 30)])],
  };
};

const sumFrom: CodeTemplate = (rng) => {
  const k = rng.int(0, 80);
  const solve = (n: number) => {
    let s = 0;
    for (let i = k; i <= n; i++) s += i;
    return s;
  };
  return {
    key: `sumFrom:${k}`,
    entry: "sumFrom",
    problem: `Write a JavaScript function \`sumFrom(n)\` that returns the sum of the integers from ${k} to n inclusive (0 if n is less than ${k}).`,
    reference: `function sumFrom(n) { let s = 0; for (let i = ${k}; i <= n; i++) s += i; return s; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[k], [k - 1], ...ints(rng, 4, k, k + 120)],
  };
};

const longWords: CodeTemplate = (rng) => {
  const k = rng.int(1, 6);
  const solve = (s: string) => s.split(" ").filter((w) => w.length > k).length;
  return {
    key: `longWords:${k}`,
    entry: "longWords",
    problem: `Write a JavaScript function \`longWords(s)\` that returns how many of the space-separated words of the string s have more than ${k} letters.`,
    reference: `function longWords(s) { return s.split(" ").filter((w) => w.length > ${k}).length; }`,
    solve: solve as CodeInstance["solve"],
    inputs: repeat(6, () => [words(rng)]),
  };
};

/** Level 2: one pass over an array, a string or a range. */
export const LOOP_TEMPLATES: readonly CodeTemplate[] = [sumAbove, countMultiples, addToEach, keepBelow, sumFrom, longWords];
