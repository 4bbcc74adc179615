// The reference coding split reaches 300 test tasks without touching what the base model pretrained on.
import { describe, expect, it } from "vitest";
import {
  REFERENCE_TEST_SIZE,
  referenceCodeTasks,
  referenceMathTasks,
  withTestSize,
} from "../../examples/workflows/common/reference-tasks.js";
import { makeCodeTasks } from "../../src/envs/tasks/code/code-tasks.js";

describe("reference task sets", () => {
  it("coding: 300 test tasks, train unchanged, dev keeps its head, splits disjoint", () => {
    const cut = makeCodeTasks(42, { count: 2000 });
    const ref = referenceCodeTasks(42);
    expect([cut.train.length, cut.dev.length, cut.test.length]).toEqual([863, 123, 247]);
    expect([ref.train.length, ref.dev.length, ref.test.length]).toEqual([863, 70, REFERENCE_TEST_SIZE]);
    expect(ref.train).toEqual(cut.train);
    expect(ref.dev).toEqual(cut.dev.slice(0, 70));
    expect(ref.test.slice(53)).toEqual(cut.test);
    const keys = [ref.train, ref.dev, ref.test].map((s) => new Set(s.map((t) => t.key)));
    expect(keys[0].size + keys[1].size + keys[2].size).toBe(1233);
    expect(new Set([...keys[0], ...keys[1], ...keys[2]]).size).toBe(1233);
  });

  it("math already holds 300 test problems", () => {
    expect(referenceMathTasks(42).test).toHaveLength(REFERENCE_TEST_SIZE);
  });

  it("withTestSize leaves a big enough test split alone and never empties dev", () => {
    const s = { train: [1, 2], dev: [3, 4, 5], test: [6, 7] };
    expect(withTestSize(s, 2)).toBe(s);
    expect(withTestSize(s, 3)).toEqual({ train: [1, 2], dev: [3, 4], test: [5, 6, 7] });
    expect(withTestSize(s, 10)).toEqual({ train: [1, 2], dev: [3], test: [4, 5, 6, 7] });
  });
});
