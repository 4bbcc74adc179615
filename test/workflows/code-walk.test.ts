// Scripted runs of iterative coding visit nodes in the right order: stop as soon as every test passes,
// at most 3 turns, reflect only while failures and turns remain; prompts come from the base model's
// builders; a hostile or missing submission is a recorded failure, never a crash.
import { describe, expect, it } from "vitest";
import { BUDGET, clip } from "../../examples/workflows/iterative-coding/roles.js";
import {
  limiter,
  sandboxPeak,
  sandboxRuns,
  VERIFIER_CONCURRENCY,
  VERIFIER_LIMITS,
  verifyCode,
} from "../../examples/workflows/iterative-coding/verifier.js";
import { initialState, workflow } from "../../examples/workflows/iterative-coding/workflow.js";
import { codePlanPrompt, codePrompt, codeTarget, reflectPrompt } from "../../examples/workflows/common/prompts.js";
import { runEpisodes, scriptedCaller } from "../../src/workflow/index.js";
import { addTask, CODE_BY_PASS_RATE, codingScript, visited, walkCoding } from "./code-fixtures.js";

describe("iterative coding: node order", () => {
  it("stops after the first verifier turn when every test passes (no reflect)", async () => {
    const { trajectory: t } = await walkCoding(codingScript(() => CODE_BY_PASS_RATE[1]));
    expect(t.status).toBe("done");
    expect(visited(t)).toEqual(["plan@1", "code@1", "verify@1"]);
    expect(t.metrics).toMatchObject({ passRate: 1, allPass: 1, verifierTurns: 1 });
  });

  it("reflects on failures and stops early once all pass", async () => {
    const { trajectory: t } = await walkCoding(codingScript((turn) => (turn === 1 ? CODE_BY_PASS_RATE[0.5] : CODE_BY_PASS_RATE[1])));
    expect(visited(t)).toEqual(["plan@1", "code@1", "verify@1", "reflect@1", "plan@2", "code@2", "verify@2"]);
    expect(t.finalState.results.map((r) => r.passRate)).toEqual([0.5, 1]);
    expect(t.metrics).toMatchObject({ passRate: 1, verifierTurns: 2 });
  });

  it("runs at most 3 turns and does not reflect after the last one", async () => {
    const { trajectory: t } = await walkCoding(codingScript(() => CODE_BY_PASS_RATE[0.25]));
    expect(visited(t)).toEqual([
      ...["plan@1", "code@1", "verify@1", "reflect@1"],
      ...["plan@2", "code@2", "verify@2", "reflect@2"],
      ...["plan@3", "code@3", "verify@3"],
    ]);
    expect(t.metrics).toMatchObject({ passRate: 0.25, allPass: 0, verifierTurns: 3, turnLimitHits: 0 });
  });

  it("builds every prompt with the base model's builders, from the newest plan, code, failures and reflection", async () => {
    const { calls, trajectory: t } = await walkCoding(codingScript((turn) => (turn === 1 ? CODE_BY_PASS_RATE[0.5] : CODE_BY_PASS_RATE[1])));
    const byNode = (node: string, visit: number) => calls.filter((c) => c.node === node)[visit].messages;
    const feedback = t.finalState.results[0].feedback;
    expect(feedback).toContain("2/4 tests passed.");
    expect(feedback).toContain("add(1, 2): expected 3, got 2");
    expect(byNode("plan", 0)).toEqual(codePlanPrompt(addTask.problem));
    expect(byNode("code", 0)).toEqual(codePrompt(addTask.problem, "plan 1: return the sum"));
    expect(byNode("reflect", 0)).toEqual(
      reflectPrompt(addTask.problem, "function add(a, b) { return a * 2; }", clip(feedback, BUDGET.feedback)),
    );
    expect(byNode("plan", 1)).toEqual(codePlanPrompt(addTask.problem, "reflection 1: use a + b"));
  });
});

describe("iterative coding: the verifier never crashes an episode", () => {
  it("records a code format failure as all tests failed, without starting a process", async () => {
    const { trajectory: t } = await walkCoding(codingScript(() => "function add(a, b) { return a + b; }")); // no ```js block
    expect(t.status).toBe("done");
    expect(t.records.find((r) => r.node === "code")?.parsed).toMatchObject({ ok: false });
    expect(t.finalState.results.map((r) => r.passRate)).toEqual([0, 0, 0]);
    expect(t.finalState.results[0].feedback).toContain("no ```js block");
  });

  it("records hanging, crashing and hostile submissions as failed turns", async () => {
    const hostile = [
      "while (true) {}",
      "function add() { while (true) {} }",
      "process.exit(1)",
      "function add() { return require('node:child_process').execSync('ls'); }",
      "const a = []; for (;;) a.push(new Array(1e6).fill(1));",
      "throw new Error('top-level')",
    ];
    const results = await Promise.all(hostile.map((code) => verifyCode({ code, tests: addTask.tests })));
    for (const { result } of results) expect(result.passRate).toBe(0);
    const { trajectory: t } = await walkCoding(codingScript((turn) => codeTarget(hostile[turn - 1])));
    expect(t.status).toBe("done");
    expect(t.metrics).toMatchObject({ verifierTurns: 3, passRate: 0, toolErrors: 0 });
  });

  it("keeps at most VERIFIER_CONCURRENCY sandboxes alive across concurrent episodes", async () => {
    const slots = limiter(2);
    let inFlight = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        slots.run(async () => {
          peak = Math.max(peak, ++inFlight);
          await new Promise((r) => setTimeout(r, 5));
          inFlight--;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(slots.peak()).toBe(2);
    expect(VERIFIER_CONCURRENCY).toBeGreaterThanOrEqual(1);
    // 12 concurrent episodes all reach the verifier; each still gets its own result
    const caller = scriptedCaller(codingScript(() => CODE_BY_PASS_RATE[1]));
    const episodes = Array.from({ length: 12 }, (_, i) => ({ id: `ep-${i}`, state: initialState(addTask) }));
    const ts = await runEpisodes(workflow, episodes, { caller });
    expect(ts.map((t) => t.metrics.passRate)).toEqual(Array(12).fill(1));
    expect(sandboxPeak()).toBeGreaterThanOrEqual(1);
    expect(sandboxPeak()).toBeLessThanOrEqual(VERIFIER_CONCURRENCY);
  });

  it("runs resubmitted code once and hands each caller its own copy of the verdict", async () => {
    const input = { code: "function add(a, b) { return a + b + 0; }", tests: addTask.tests };
    const before = sandboxRuns();
    const [a, b] = await Promise.all([verifyCode(input), verifyCode(input)]);
    const c = await verifyCode(input);
    expect(sandboxRuns() - before).toBe(1);
    expect(a.result.passRate).toBe(1);
    expect(c).toEqual(a);
    expect(b).toEqual(a);
    c.result.tests[0].status = "wrong";
    expect((await verifyCode(input)).result.tests[0].status).toBe("pass");
    // other limits are another verdict
    await verifyCode(input, { ...VERIFIER_LIMITS, perTestMs: 300 });
    expect(sandboxRuns() - before).toBe(2);
  });

  it("runs again after a verdict on the machine (wall-clock backstop), not on the code", async () => {
    const input = { code: "function add(a, b) { return a - b - 1; }", tests: addTask.tests };
    const tight = { ...VERIFIER_LIMITS, wallMs: 1 };
    const before = sandboxRuns();
    const first = await verifyCode(input, tight);
    expect(first.result.failure?.kind).toBe("wall-timeout");
    await verifyCode(input, tight);
    expect(sandboxRuns() - before).toBe(2);
  });
});
