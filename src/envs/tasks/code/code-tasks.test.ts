import { describe, expect, it } from "vitest";
import { makeCodeTasks } from "./code-tasks.js";
import { EXPRESSION_TEMPLATES, LOOP_TEMPLATES } from "./graded-templates.js";

describe("synthetic code tasks", () => {
  it("is deterministic for a seed", () => {
    expect(makeCodeTasks(3, { count: 50 })).toEqual(makeCodeTasks(3, { count: 50 }));
    expect(makeCodeTasks(4, { count: 50 }).train[0]).not.toEqual(makeCodeTasks(3, { count: 50 }).train[0]);
  });

  it("splits are disjoint by template parameters and tests are well-formed", () => {
    const s = makeCodeTasks(9);
    expect(s.test.length).toBeGreaterThan(10);
    const keys = (xs: { key: string }[]) => new Set(xs.map((t) => t.key));
    const train = keys(s.train);
    for (const t of [...s.dev, ...s.test]) expect(train.has(t.key)).toBe(false);
    for (const t of s.dev) expect(keys(s.test).has(t.key)).toBe(false);
    const problems = new Set(s.train.map((t) => t.problem));
    for (const t of s.test) expect(problems.has(t.problem)).toBe(false);
    for (const t of [...s.train, ...s.test]) {
      expect(t.tests.length).toBeGreaterThanOrEqual(4);
      for (const c of t.tests) expect("call" in c && c.call.startsWith(`${t.entry}(`)).toBe(true);
      expect(t.problem).toContain(t.entry);
    }
  });

  it("a named family draws its own templates on its own stream, with ids of its own", () => {
    const templates = [...EXPRESSION_TEMPLATES, ...LOOP_TEMPLATES];
    const graded = makeCodeTasks(3, { count: 200, templates, family: "graded" });
    const first = makeCodeTasks(3, { count: 200 });
    const all = [...graded.train, ...graded.dev, ...graded.test];
    expect(all).toHaveLength(200);
    expect(all.every((t) => t.id.startsWith("code-graded-"))).toBe(true);
    const firstIds = new Set([...first.train, ...first.dev, ...first.test].map((t) => t.id));
    expect(all.filter((t) => firstIds.has(t.id))).toEqual([]);
    // every template shows up, and the held-out splits ask for parameter values train never shows
    expect(new Set(all.map((t) => t.key.split(":")[0])).size).toBe(templates.length);
    const trainKeys = new Set(graded.train.map((t) => t.key));
    expect([...graded.dev, ...graded.test].filter((t) => trainKeys.has(t.key))).toEqual([]);
    expect(makeCodeTasks(3, { count: 200, templates, family: "graded" })).toEqual(graded);
  });
});
