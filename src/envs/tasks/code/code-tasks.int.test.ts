// Runs every template's reference through the real verifier (spawns processes: marked slow).
import { describe, expect, it } from "vitest";
import { verifyMany } from "../../code-verifier/verify-many.js";
import { createKeyedRng } from "../../../rng.js";
import { makeCodeTasks } from "./code-tasks.js";
import { CODE_TEMPLATES, type CodeTemplate } from "./templates.js";
import { EXPRESSION_TEMPLATES, LOOP_TEMPLATES } from "./graded-templates.js";

const FAMILIES: [string, readonly CodeTemplate[] | undefined][] = [
  ["first", undefined],
  ["graded", [...EXPRESSION_TEMPLATES, ...LOOP_TEMPLATES]],
];

describe("synthetic code tasks (verifier)", () => {
  it.each(FAMILIES)("every reference solution of the %s family passes its own tests in the sandbox", async (family, templates) => {
    const size = (templates ?? CODE_TEMPLATES).length;
    const { train, dev, test } = makeCodeTasks(11, { count: size * 3, templates, family: templates && family });
    const all = [...train, ...dev, ...test];
    // one task per template at least, plus the rest of a small sample
    expect(new Set(all.map((t) => t.key.split(":")[0])).size).toBe(size);
    const results = await verifyMany(
      all.map((t) => ({ code: t.reference, tests: t.tests })),
      { concurrency: 2 },
    );
    for (const [i, r] of results.entries())
      expect(r.passRate, `${all[i].key}: ${JSON.stringify(r.tests.filter((x) => x.status !== "pass"))}`).toBe(1);
  });

  it("a wrong solution is caught by the generated tests", async () => {
    const inst = CODE_TEMPLATES[1](createKeyedRng("wrong"));
    const { train } = makeCodeTasks(5, { count: 30 });
    const task = train.find((t) => t.entry === inst.entry) ?? train[0];
    const [r] = await verifyMany([{ code: `function ${task.entry}() { return 0; }`, tests: task.tests }]);
    expect(r.passRate).toBeLessThan(1);
    expect(r.tests.some((t) => t.status === "wrong")).toBe(true);
  });
});
