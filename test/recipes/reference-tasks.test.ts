// The reference coding split reaches 300 test tasks without touching what the base model pretrained on.
import { describe, expect, it } from "vitest";
import {
  firstCodeTasks,
  gradedCodeTasks,
  interleave,
  REFERENCE_TEST_SIZE,
  referenceCodeTasks,
  referenceMathTasks,
  withTestSize,
} from "../../examples/workflows/common/reference-tasks.js";
import { makeCodeTasks } from "../../src/envs/tasks/code/code-tasks.js";

describe("reference task sets", () => {
  it("first code family: 300 test tasks, train unchanged, dev keeps its head, splits disjoint", () => {
    const cut = makeCodeTasks(42, { count: 2000 });
    const ref = firstCodeTasks(42);
    expect([cut.train.length, cut.dev.length, cut.test.length]).toEqual([863, 123, 247]);
    expect([ref.train.length, ref.dev.length, ref.test.length]).toEqual([863, 70, REFERENCE_TEST_SIZE]);
    expect(ref.train).toEqual(cut.train);
    expect(ref.dev).toEqual(cut.dev.slice(0, 70));
    expect(ref.test.slice(53)).toEqual(cut.test);
    const keys = [ref.train, ref.dev, ref.test].map((s) => new Set(s.map((t) => t.key)));
    expect(keys[0].size + keys[1].size + keys[2].size).toBe(1233);
    expect(new Set([...keys[0], ...keys[1], ...keys[2]]).size).toBe(1233);
  });

  it("coding: both families in every split, interleaved, disjoint by key and by id", () => {
    const [ref, first, graded] = [referenceCodeTasks(42), firstCodeTasks(42), gradedCodeTasks(42)];
    expect([graded.train.length, graded.dev.length, graded.test.length]).toEqual([525, 75, 150]);
    for (const split of ["train", "dev", "test"] as const) {
      expect(ref[split]).toHaveLength(first[split].length + graded[split].length);
      // every prefix of 32 (the in-training evaluation's dev episodes) holds both families
      expect(ref[split].slice(0, 32).filter((t) => t.id.startsWith("code-graded-")).length).toBeGreaterThan(5);
    }
    const keys = [ref.train, ref.dev, ref.test].map((s) => new Set(s.map((t) => t.key)));
    expect([...keys[1], ...keys[2]].filter((k) => keys[0].has(k))).toEqual([]);
    const ids = [...ref.train, ...ref.dev, ...ref.test].map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("interleave keeps each list's order and mixes them in proportion", () => {
    expect(interleave<number | string>([1, 2, 3, 4], ["a", "b"])).toEqual([1, "a", 2, 3, "b", 4]);
    expect(interleave([], ["a"])).toEqual(["a"]);
    expect(interleave([1, 2], [])).toEqual([1, 2]);
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
