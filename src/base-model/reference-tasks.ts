// The math and coding task sets of the reference workflows (examples/workflows/marft-math and
// iterative-coding). One definition, so the base model's mixture trains on exactly their train splits
// and the leak test checks exactly their held-out splits.
import { makeArithmeticTasks } from "../envs/tasks/arithmetic/arithmetic-tasks.js";
import { makeCodeTasks } from "../envs/tasks/code/code-tasks.js";

/** Arithmetic word problems for seed `seed`: 1500, so the test split holds 300. */
export const referenceMathTasks = (seed: number) => makeArithmeticTasks(seed, { count: 1500 });

/** Coding tasks for seed `seed`: asks for 2000, the family saturates at 1233 (247 test). */
export const referenceCodeTasks = (seed: number) => makeCodeTasks(seed, { count: 2000 });
