// The math and coding task sets of the reference workflows (examples/workflows/marft-math and
// iterative-coding). One definition, so the base models' mixtures train on exactly their train splits
// and the leak tests check exactly their held-out splits.
import { EXPRESSION_TEMPLATES, LOOP_TEMPLATES, makeArithmeticTasks, makeCodeTasks, type Splits } from "maso/envs";

/** Held-out test tasks a reference workflow reports on: enough that a 5-point change is visible above noise. */
export const REFERENCE_TEST_SIZE = 300;

/** Arithmetic word problems for seed `seed`: 1500, so the test split holds 300. */
export const referenceMathTasks = (seed: number) => makeArithmeticTasks(seed, { count: 1500 });

/**
 * The first code family for seed `seed` (level 3: several rules, state across a loop), which
 * models/base pretrained on. It saturates at 1233 distinct tasks, which the 70/10/20 cut splits
 * 863 / 123 / 247; the tail of dev moves to test (863 / 70 / 300).
 */
export const firstCodeTasks = (seed: number) => withTestSize(makeCodeTasks(seed, { count: 2000 }), REFERENCE_TEST_SIZE);

/** The graded code family for seed `seed` (levels 1 and 2): 750 tasks, cut 525 / 75 / 150. */
export const gradedCodeTasks = (seed: number) =>
  makeCodeTasks(seed, { count: 750, templates: [...EXPRESSION_TEMPLATES, ...LOOP_TEMPLATES], family: "graded" });

/**
 * Coding tasks for seed `seed`: both families, split by split (1388 / 145 / 450), interleaved so
 * that every prefix (in-training evaluation reads dev's head) holds all three levels in proportion.
 */
export function referenceCodeTasks(seed: number) {
  const [first, graded] = [firstCodeTasks(seed), gradedCodeTasks(seed)];
  return {
    train: interleave(first.train, graded.train),
    dev: interleave(first.dev, graded.dev),
    test: interleave(first.test, graded.test),
  };
}

/** Moves the last tasks of dev to the front of test until test holds `size` (train untouched). */
export function withTestSize<T>(s: Splits<T>, size: number): Splits<T> {
  const move = Math.min(Math.max(0, size - s.test.length), Math.max(0, s.dev.length - 1));
  if (move === 0) return s;
  return { train: s.train, dev: s.dev.slice(0, s.dev.length - move), test: [...s.dev.slice(s.dev.length - move), ...s.test] };
}

/** Merges `a` and `b`, each in its own order, so that every prefix holds them in proportion to their lengths. */
export function interleave<T>(a: readonly T[], b: readonly T[]): T[] {
  const out: T[] = [];
  let [i, j] = [0, 0];
  // take from a while its next item sits earlier in its list, relative to length, than b's does
  while (i < a.length || j < b.length)
    if (j >= b.length || (i < a.length && (2 * i + 1) * b.length <= (2 * j + 1) * a.length)) out.push(a[i++]);
    else out.push(b[j++]);
  return out;
}
