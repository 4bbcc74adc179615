// Loud, recorded failures of user functions: a reward function that throws excludes its episode
// (a line with code and message in the rewards file, counted in metrics.jsonl) while the run goes
// on; one that gives NaN or a Promise is a named validation error, with the step's trajectories
// still written; tool and workflow-metrics errors land in trajectory files and counts; an eval
// metric that throws or is not finite is a named MasoError. And rewards are computed once per step:
// the files show exactly what the worker groups trained on.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type * as demo from "../../examples/two-role-demo/workflow.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import type { NamedReward } from "../../src/rewards/types.js";
import { runTraining } from "../../src/run/rl-run.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { defineTool } from "../../src/workflow/tool.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { cliInProcess } from "../cli/cli-harness.js";
import { ask, tinyConfig } from "../runtime/helpers.js";
import { FIXTURES, spyRuntime, stepFiles, trainDemo } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "maso-faults-rewards-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type R = NamedReward<demo.Task, demo.State>;
const rewardAll = (value: (t: Trajectory<demo.State>) => number) => (t: Trajectory<demo.State>) =>
  t.records.map((r) => ({ recordIndex: r.index, kind: "trajectory" as const, value: value(t) }));

describe("reward functions", () => {
  it("one that throws excludes its episode with the message in the rewards file and a count in metrics; the run goes on", async () => {
    const flaky: R = {
      name: "flaky",
      fn: (t, task) => {
        if (t.episodeId.endsWith("-g1")) throw new Error(`no gold answer for ${task.a}+${task.b}`);
        return rewardAll(() => 1)(t);
      },
    };
    const runDir = join(root, "throws");
    const { result } = await trainDemo(runDir, { rewards: [flaky] });
    expect((await result).rows).toHaveLength(2);
    for (const step of [1, 2]) {
      const f = await stepFiles(runDir, step);
      expect(f.trajectories).toHaveLength(8);
      expect(f.rewards.map((r) => r.episodeId).every((id) => !id.endsWith("-g1"))).toBe(true);
      expect(f.rewards).toHaveLength(6);
      expect(f.excluded).toEqual(
        [0, 1].map((k) => ({
          episodeId: `s${step}-t${k}-g1`,
          excluded: true,
          code: "REWARD_FN_FAILED",
          message: expect.stringMatching(
            new RegExp(`^episode "s${step}-t${k}-g1": reward function "flaky" threw: no gold answer for \\d\\+\\d`),
          ),
        })),
      );
      expect(f.row?.episodes).toMatchObject({ count: 8, rewarded: 6, failed: 2, failures: { REWARD_FN_FAILED: 2 } });
      expect(f.row?.roles.planner.samples).toBe(6);
      expect(f.row?.roles.solver.samples).toBe(6);
    }
  });

  it("one that gives NaN is REWARD_NON_FINITE (exit 1), and the step's trajectories are on disk", async () => {
    const runDir = join(root, "nan");
    const r = await cliInProcess("train", join(FIXTURES, "nan-reward.ts"), "--run-dir", runDir);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^maso train: error REWARD_NON_FINITE: episode "s1-t0-g0", node "plan" visit 0 \(record 0\): reward function "zeroOverZero" gave NaN/,
    );
    const f = await stepFiles(runDir, 1);
    expect(f.trajectories.map((t) => t.status)).toEqual(Array(8).fill("done"));
    expect(f.rewards).toEqual([]);
    // only the untrained cast's dev evaluation, which rewards nothing
    expect(readMetrics(runDir).map((row) => row.step)).toEqual([0]);
  });

  it("one that returns a Promise (it would never be awaited) is REWARD_INVALID, not a hang", async () => {
    const asyncReward = { name: "later", fn: () => new Promise(() => {}) } as unknown as R;
    const runDir = join(root, "promise");
    const { result } = await trainDemo(runDir, { rewards: [asyncReward] });
    await expect(result).rejects.toMatchObject({
      code: "REWARD_INVALID",
      message: expect.stringContaining('reward function "later" returned a Promise, not a list'),
    });
    expect((await stepFiles(runDir, 1)).trajectories).toHaveLength(8);
  });

  it("rewards are computed once per step, and the rewards file holds exactly what the worker groups received", async () => {
    let calls = 0;
    // a different value on every call: a second reward pass would write values that never trained
    const counting: R = {
      name: "counting",
      fn: (t) => {
        const v = ++calls / 100;
        return rewardAll(() => v)(t);
      },
    };
    const runDir = join(root, "once");
    const { result, sent } = await trainDemo(runDir, { rewards: [counting] });
    await result;
    expect(calls).toBe(16);
    const trained = new Map(sent.flat().map((i) => [`${i.episodeId}/${i.role}`, i.reward]));
    expect(trained.size).toBe(32);
    for (const step of [1, 2]) {
      const { rewards, row } = await stepFiles(runDir, step);
      for (const ep of rewards) for (const r of ep.rewards) expect(r.value).toBe(trained.get(`${ep.episodeId}/${r.role}`));
      const mean = rewards.reduce((a, ep) => a + (ep.rewards[0].value as number), 0) / rewards.length;
      expect(row?.roles.planner.reward?.total).toBeCloseTo(mean, 10);
    }
  });
});

interface ToolState {
  q: string;
  found: string;
  answer: string;
}

describe("tools and workflow metrics", () => {
  it("a throwing tool is in the trajectory file with its message and counted; a throwing metrics() fails its episode, recorded and counted", async () => {
    const lookup = defineTool({
      name: "lookup",
      run: async (q: string) => {
        if (q === "q1") throw new Error("index offline");
        return `doc for ${q}`;
      },
    });
    const answer = defineRole<ToolState, string>({
      name: "answer",
      prompt: (s) => ask(`${s.q} ${s.found}`),
      parse: textParser(),
      fallback: () => "",
      maxNewTokens: 2,
    });
    const wf = workflow<ToolState>({
      name: "tools",
      metrics: (s) => {
        if (s.q === "q2") throw new Error("gold missing");
        return { found: s.found.startsWith("doc") ? 1 : 0 };
      },
    })
      .tool("lookup", lookup, { input: (s) => s.q, update: (r) => ({ found: r.ok ? r.value : `error: ${r.error}` }) })
      .role("answer", answer, { update: (a) => ({ answer: a }) })
      .edge(START, "lookup")
      .edge("lookup", "answer")
      .edge("answer", END)
      .compile();
    const runDir = join(root, "tools");
    const tasks = ["q0", "q1", "q2"];
    await runTraining<ToolState, string>({
      runDir,
      build: (startStep) =>
        spyRuntime({
          workflow: wf,
          models: [{ name: "m", source: { config: tinyConfig(), seed: 2 } }],
          cast: { answer: "m" },
          rewards: [sharedOutcome((t: Trajectory<ToolState>) => t.finalState.answer.length)],
          advantage: { estimator: "grpo", options: { groupBy: ["role"] } },
          startStep,
        }),
      tasks,
      initialState: (q) => ({ q, found: "", answer: "" }),
      steps: 1,
      tasksPerStep: 3,
      groupSize: 2,
      seed: 0,
      checkpointEvery: 1,
      keep: 1,
    });
    const f = await stepFiles(runDir, 1);
    const byQ = (q: string) => f.trajectories.filter((t) => (t.finalState as unknown as ToolState).q === q);
    for (const t of byQ("q1")) expect(t.records[0].toolResults[0]).toMatchObject({ ok: false, error: "index offline", timedOut: false });
    for (const t of byQ("q2"))
      expect(t.error).toEqual({ code: "METRICS_FAILED", message: "metrics() threw: gold missing", node: null, visit: null });
    expect(f.excluded.map((e) => e.code)).toEqual(["METRICS_FAILED", "METRICS_FAILED"]);
    expect(f.row?.episodes).toMatchObject({ count: 6, rewarded: 4, failed: 2, failures: { METRICS_FAILED: 2 } });
    expect(f.row?.episodes.metrics.toolErrors).toBeCloseTo(2 / 6);
  });
});

describe("the eval metric", () => {
  it("NaN is METRIC_INVALID naming the function and the episode (exit 1), never null in best.json", async () => {
    const runDir = join(root, "metric-nan");
    const r = await cliInProcess("train", join(FIXTURES, "bad-metric.ts"), "--run-dir", runDir);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'maso train: error METRIC_INVALID: metric function "exactDigit" returned NaN on eval episode "eval-0" (task 0), not a finite number (hint: return a finite score (e.g. 0 for a failed episode); check for 0/0 and async functions)\n',
    );
    expect(existsSync(join(runDir, "checkpoints", "best.json"))).toBe(false);
    // the untrained cast's evaluation, before step 1, is the first to call it
    expect(readMetrics(runDir)).toEqual([]);
    expect(existsSync(join(runDir, "trajectories"))).toBe(false);
  });

  it("a throw is METRIC_FAILED with its message, not an internal error with a stack trace", async () => {
    process.env.MASO_FAULT_METRIC = "throw";
    try {
      const r = await cliInProcess("train", join(FIXTURES, "bad-metric.ts"), "--run-dir", join(root, "metric-throw"));
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        /^maso train: error METRIC_FAILED: metric function "exactDigit" threw on eval episode "eval-0" \(task 0\): gold answer missing/,
      );
      expect(r.err).not.toContain("internal error");
    } finally {
      delete process.env.MASO_FAULT_METRIC;
    }
  });
});
