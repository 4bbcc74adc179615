// The math and coding task sets of the reference workflows (examples/workflows/marft-math and
// iterative-coding). One definition, so the base model's mixture trains on exactly their train splits
// and the leak test checks exactly their held-out splits.
import { makeArithmeticTasks, makeCodeTasks, type Splits } from "maso";

/** Held-out test tasks a reference workflow reports on: enough that a 5-point change is visible above noise. */
export const REFERENCE_TEST_SIZE = 300;

/** Arithmetic word problems for seed `seed`: 1500, so the test split holds 300. */
export const referenceMathTasks = (seed: number) => makeArithmeticTasks(seed, { count: 1500 });

/**
 * Coding tasks for seed `seed`. The family saturates at 1233 distinct tasks, which the 70/10/20 cut
 * splits 863 / 123 / 247; the tail of dev moves to test (863 / 70 / 300). Train stays exactly the
 * split the base model pretrained on, and dev keeps its head, which in-training evaluation reads.
 */
export const referenceCodeTasks = (seed: number) => withTestSize(makeCodeTasks(seed, { count: 2000 }), REFERENCE_TEST_SIZE);

/** Moves the last tasks of dev to the front of test until test holds `size` (train untouched). */
export function withTestSize<T>(s: Splits<T>, size: number): Splits<T> {
  const move = Math.min(Math.max(0, size - s.test.length), Math.max(0, s.dev.length - 1));
  if (move === 0) return s;
  return { train: s.train, dev: s.dev.slice(0, s.dev.length - move), test: [...s.dev.slice(s.dev.length - move), ...s.test] };
}
