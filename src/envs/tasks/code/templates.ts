// Templates for small programming tasks over integers, strings and lists. Each draws parameters,
// states the problem, gives a JavaScript reference solution and a TypeScript twin that computes
// the expected test values. The two must agree; code-tasks.int.test.ts runs every reference.

import type { JsonValue } from "../../code-verifier/types.js";
import type { Rng } from "../../../rng.js";

/** One instantiated template: everything but the test inputs' expected values. */
export interface CodeInstance {
  /** Identifies template + parameters; equal keys mean the same task. */
  key: string;
  entry: string;
  problem: string;
  reference: string;
  solve: (...args: never[]) => JsonValue;
  inputs: JsonValue[][];
}

/** A template draws one instance from `rng`. */
export type CodeTemplate = (rng: Rng) => CodeInstance;

const list = (rng: Rng, lo = -20, hi = 20, maxLen = 8): number[] => Array.from({ length: rng.int(0, maxLen) }, () => rng.int(lo, hi));
const WORDS = ["apple", "river", "stone", "Cloud", "night", "Lamp", "sugar", "zebra", "ocean", "Tiger", "moss", "quiet"];
const sentence = (rng: Rng): string => Array.from({ length: rng.int(0, 5) }, () => rng.pick(WORDS)).join(rng.pick([" ", " ", ", "]));
const repeat = <T>(n: number, f: () => T): T[] => Array.from({ length: n }, f);

const sumDigitPowers: CodeTemplate = (rng) => {
  const p = rng.int(1, 3);
  const solve = (n: number) =>
    String(n)
      .split("")
      .reduce((s, d) => s + Number(d) ** p, 0);
  return {
    key: `sumDigitPowers:${p}`,
    entry: `sumDigitPowers${p}`,
    problem: `Write a JavaScript function \`sumDigitPowers${p}(n)\` that takes a non-negative integer n and returns the sum of its decimal digits, each raised to the power ${p}.`,
    reference: `function sumDigitPowers${p}(n) { let s = 0; for (const d of String(n)) s += Number(d) ** ${p}; return s; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[0], [7], ...repeat(6, () => [rng.int(10, 99999)])],
  };
};

const countAbove: CodeTemplate = (rng) => {
  const t = rng.int(-5, 10);
  const solve = (xs: number[]) => xs.filter((x) => x > t).length;
  return {
    key: `countAbove:${t}`,
    entry: "countAbove",
    problem: `Write a JavaScript function \`countAbove(xs)\` that returns how many numbers in the array xs are strictly greater than ${t}.`,
    reference: `function countAbove(xs) { let c = 0; for (const x of xs) if (x > ${t}) c++; return c; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], [[t, t + 1, t - 1]], ...repeat(6, () => [list(rng)])],
  };
};

const fizzWords: CodeTemplate = (rng) => {
  const a = rng.int(2, 7);
  let b = rng.int(2, 7);
  if (b === a) b = a === 7 ? 2 : a + 1;
  const [wa, wb] = rng.shuffle(["Fizz", "Buzz", "Ping", "Pong", "Zap", "Bop"]).slice(0, 2);
  const solve = (n: number) => (n % a === 0 && n % b === 0 ? wa + wb : n % a === 0 ? wa : n % b === 0 ? wb : String(n));
  return {
    key: `fizzWords:${a}:${b}:${wa}:${wb}`,
    entry: "fizzWords",
    problem: `Write a JavaScript function \`fizzWords(n)\` for a positive integer n: return "${wa + wb}" if n is divisible by both ${a} and ${b}, "${wa}" if only by ${a}, "${wb}" if only by ${b}, and otherwise n as a string.`,
    reference: `function fizzWords(n) { if (n % ${a} === 0 && n % ${b} === 0) return "${wa + wb}"; if (n % ${a} === 0) return "${wa}"; if (n % ${b} === 0) return "${wb}"; return String(n); }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[a * b], [a], [b], [1], ...repeat(5, () => [rng.int(1, 200)])],
  };
};

const caesar: CodeTemplate = (rng) => {
  const k = rng.int(1, 25);
  const solve = (s: string) => s.replace(/[a-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - 97 + k) % 26) + 97));
  return {
    key: `caesar:${k}`,
    entry: "shiftLetters",
    problem: `Write a JavaScript function \`shiftLetters(s)\` that shifts every lowercase letter a–z in s forward by ${k} places in the alphabet (wrapping from z to a) and leaves all other characters unchanged.`,
    reference: `function shiftLetters(s) { let out = ""; for (const c of s) { const i = c.charCodeAt(0) - 97; out += i >= 0 && i < 26 ? String.fromCharCode(((i + ${k}) % 26) + 97) : c; } return out; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[""], ["xyz"], ...repeat(5, () => [sentence(rng)])],
  };
};

const recurrence: CodeTemplate = (rng) => {
  const p = rng.int(1, 3);
  const q = rng.int(-2, 2);
  const a0 = rng.int(0, 3);
  const a1 = rng.int(1, 4);
  const solve = (n: number) => {
    let [x, y] = [a0, a1];
    if (n === 0) return x;
    for (let i = 1; i < n; i++) [x, y] = [y, p * y + q * x];
    return y;
  };
  return {
    key: `recurrence:${p}:${q}:${a0}:${a1}`,
    entry: "seqTerm",
    problem: `A sequence has a(0) = ${a0}, a(1) = ${a1} and a(n) = ${p}·a(n-1) + (${q})·a(n-2) for n ≥ 2. Write a JavaScript function \`seqTerm(n)\` that returns a(n) for an integer 0 ≤ n ≤ 15.`,
    reference: `function seqTerm(n) { let x = ${a0}, y = ${a1}; if (n === 0) return x; for (let i = 1; i < n; i++) { const z = ${p} * y + (${q}) * x; x = y; y = z; } return y; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[0], [1], [2], ...repeat(5, () => [rng.int(3, 15)])],
  };
};

const everyKthUpper: CodeTemplate = (rng) => {
  const k = rng.int(2, 4);
  const solve = (s: string) => [...s].map((c, i) => ((i + 1) % k === 0 ? c.toUpperCase() : c.toLowerCase())).join("");
  return {
    key: `everyKthUpper:${k}`,
    entry: "everyKthUpper",
    problem: `Write a JavaScript function \`everyKthUpper(s)\` that returns s with every ${k}th character (counting from 1) in upper case and all other characters in lower case.`,
    reference: `function everyKthUpper(s) { let out = ""; for (let i = 0; i < s.length; i++) out += (i + 1) % ${k} === 0 ? s[i].toUpperCase() : s[i].toLowerCase(); return out; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[""], ["ab"], ...repeat(5, () => [sentence(rng)])],
  };
};

const uniqueSorted: CodeTemplate = (rng) => {
  const desc = rng.next() < 0.5;
  const solve = (xs: number[]) => [...new Set(xs)].sort((a, b) => (desc ? b - a : a - b));
  const order = desc ? "descending" : "ascending";
  return {
    key: `uniqueSorted:${order}`,
    entry: "uniqueSorted",
    problem: `Write a JavaScript function \`uniqueSorted(xs)\` that returns the distinct numbers of the array xs in ${order} numeric order.`,
    reference: `function uniqueSorted(xs) { return Array.from(new Set(xs)).sort((a, b) => ${desc ? "b - a" : "a - b"}); }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], [[3, 3, 3]], ...repeat(6, () => [list(rng, -5, 15, 10)])],
  };
};

const prefixOp: CodeTemplate = (rng) => {
  const op = rng.pick(["sum", "max", "min"] as const);
  const f = { sum: (a: number, b: number) => a + b, max: Math.max, min: Math.min }[op];
  const solve = (xs: number[]) => {
    const out: number[] = [];
    for (const x of xs) out.push(out.length === 0 ? x : f(out[out.length - 1], x));
    return out;
  };
  const js = { sum: "acc + x", max: "Math.max(acc, x)", min: "Math.min(acc, x)" }[op];
  return {
    key: `prefixOp:${op}`,
    entry: `running${op[0].toUpperCase()}${op.slice(1)}`,
    problem: `Write a JavaScript function \`running${op[0].toUpperCase()}${op.slice(1)}(xs)\` that returns an array whose i-th element is the ${op} of xs[0..i] (an empty array for an empty input).`,
    reference: `function running${op[0].toUpperCase()}${op.slice(1)}(xs) { const out = []; let acc; xs.forEach((x, i) => { acc = i === 0 ? x : ${js}; out.push(acc); }); return out; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], [[5]], ...repeat(6, () => [list(rng)])],
  };
};

const countChar: CodeTemplate = (rng) => {
  const c = rng.pick([..."aeiostrn"]);
  const solve = (s: string) => [...s.toLowerCase()].filter((x) => x === c).length;
  return {
    key: `countChar:${c}`,
    entry: "countChar",
    problem: `Write a JavaScript function \`countChar(s)\` that returns how many times the letter "${c}" occurs in the string s, ignoring case.`,
    reference: `function countChar(s) { let n = 0; for (const x of s.toLowerCase()) if (x === "${c}") n++; return n; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[""], [c.toUpperCase() + c], ...repeat(5, () => [sentence(rng)])],
  };
};

const sumMultiples: CodeTemplate = (rng) => {
  const a = rng.int(2, 9);
  let b = rng.int(2, 9);
  if (b === a) b = a === 9 ? 2 : a + 1;
  const solve = (n: number) => {
    let s = 0;
    for (let i = 1; i < n; i++) if (i % a === 0 || i % b === 0) s += i;
    return s;
  };
  return {
    key: `sumMultiples:${Math.min(a, b)}:${Math.max(a, b)}`,
    entry: "sumMultiples",
    problem: `Write a JavaScript function \`sumMultiples(n)\` that returns the sum of all positive integers below n that are divisible by ${a} or by ${b}.`,
    reference: `function sumMultiples(n) { let s = 0; for (let i = 1; i < n; i++) if (i % ${a} === 0 || i % ${b} === 0) s += i; return s; }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[1], [a * b + 1], ...repeat(5, () => [rng.int(2, 500)])],
  };
};

const rotateLeft: CodeTemplate = (rng) => {
  const k = rng.int(1, 5);
  const solve = (xs: number[]) => (xs.length === 0 ? [] : xs.map((_, i) => xs[(i + k) % xs.length]));
  return {
    key: `rotateLeft:${k}`,
    entry: "rotateLeft",
    problem: `Write a JavaScript function \`rotateLeft(xs)\` that returns a new array with the elements of xs rotated ${k} place${k > 1 ? "s" : ""} to the left (the first element moves to the end${k > 1 ? ", repeatedly" : ""}).`,
    reference: `function rotateLeft(xs) { const n = xs.length; if (n === 0) return []; const r = ${k} % n; return xs.slice(r).concat(xs.slice(0, r)); }`,
    solve: solve as CodeInstance["solve"],
    inputs: [[[]], [[1]], ...repeat(6, () => [list(rng, 0, 9, 7)])],
  };
};

/** All templates, in a fixed order (the order is part of determinism). */
export const CODE_TEMPLATES: readonly CodeTemplate[] = [
  sumDigitPowers,
  countAbove,
  fizzWords,
  caesar,
  recurrence,
  everyKthUpper,
  uniqueSorted,
  prefixOp,
  countChar,
  sumMultiples,
  rotateLeft,
];
