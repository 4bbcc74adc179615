// The untrained cast's evaluation before step 1: it writes metrics row `step: 0` and keeps its
// episodes, changes nothing training does (rows of steps ≥ 1, trajectories and checkpoint bytes equal
// with eval.atStart on and off, with --eval-test's test evaluations too), is never redone by a resume,
// and is the first best-on-dev candidate: a run wrecked by its learning rate ends with best.json at
// step 0, and `maso eval` on "best" evaluates the untrained cast. `--eval-test` records the test split
// before and after with their paired comparison.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBest } from "../../src/checkpoint/best.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { readEvalEpisodes } from "../../src/run/eval-episodes.js";
import { runTraining, type TrainRunOptions, type TrainSummary } from "../../src/run/rl-run.js";
import { evalFile } from "../../src/run/train-evals.js";
import type { State, Task } from "../../examples/two-role-demo/workflow.js";
import * as demo from "../results/fixtures/demo-with-test.js";
import { cliInProcess as cli } from "./cli-harness.js";
import { exactMetrics, runTrajectories } from "./run-files.js";

const DEMO = join(import.meta.dirname, "..", "results", "fixtures", "demo-with-test.ts");
const root = mkdtempSync(join(tmpdir(), "maso-step0-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Demo = TrainRunOptions<State, Task>;

/** runTraining of the demo in-process, evaluating on dev every step (selecting the best), fp32. */
async function train(runDir: string, steps: number, extra: Partial<Demo> = {}, evalExtra: Partial<NonNullable<Demo["eval"]>> = {}) {
  const raw = { ...demo.config, models: { base: { ...demo.config.models.base, precision: "fp32" } }, runDir };
  const { config, cast } = resolveRunConfig(raw, { roles: ["planner", "solver"] });
  const opts = runtimeFromConfig(config, cast, demo);
  return runTraining({
    ...{ runDir, tasks: demo.tasks.train, initialState: demo.initialState, taskId: demo.taskId },
    build: (startStep) => createRuntime({ ...opts, startStep }),
    ...{ steps, tasksPerStep: 2, groupSize: 4, seed: config.seed, checkpointEvery: 1, keep: 10 },
    eval: { every: 1, tasks: demo.tasks.dev, episodes: null, metric: demo.metric, selectBest: true, ...evalExtra },
    ...extra,
  });
}

/** Every checkpoint's files and their hashes, by step. */
async function checkpointHashes(runDir: string) {
  const out: Record<number, Record<string, string>> = {};
  for (const c of await listCheckpoints(runDir)) {
    const m = JSON.parse(readFileSync(join(c.dir, "manifest.json"), "utf8")) as { files: Record<string, { sha256: string }> };
    out[c.step] = Object.fromEntries(Object.entries(m.files).map(([f, v]) => [f, v.sha256]));
  }
  return out;
}

const trained = (runDir: string) => exactMetrics(runDir).filter((r) => r.step > 0);
const summaryOf = (runDir: string) => JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8")) as TrainSummary;

describe("the step-0 evaluation", () => {
  it("writes row 0 and its episodes, and changes nothing training does (with --eval-test's evaluations too)", async () => {
    const on = join(root, "on");
    const off = join(root, "off");
    const seen: string[] = [];
    await train(on, 2, { test: { tasks: demo.tasks.test, metric: demo.metric }, onEvalAtStart: (split) => seen.push(split) });
    await train(off, 2, {}, { atStart: false });
    expect(seen).toEqual(["dev", "test"]);
    const row0 = readMetrics(on)[0];
    expect(Object.keys(row0).sort()).toEqual(["eval", "step", "time"]);
    expect(row0).toMatchObject({ step: 0, eval: { episodes: demo.tasks.dev.length } });
    expect(readMetrics(off)[0].step).toBe(1);
    const kept = await readEvalEpisodes(evalFile(on, "dev", 0));
    expect(kept.header).toMatchObject({ split: "dev", step: 0, checkpoint: "init", metric: (row0.eval as { metric: number }).metric });
    expect(kept.episodes).toHaveLength(demo.tasks.dev.length);
    expect(existsSync(evalFile(off, "dev", 0))).toBe(false);

    expect(trained(on)).toEqual(trained(off));
    expect(runTrajectories(on)).toEqual(runTrajectories(off));
    expect(await checkpointHashes(on)).toEqual(await checkpointHashes(off));

    // --eval-test: the test split of the untrained cast and of the cast that ships, compared
    const s = summaryOf(on);
    const best = (await readBest(on))!;
    expect(s.best).toEqual(best);
    expect(s.testBefore).toMatchObject({ step: 0, episodes: demo.tasks.test.length });
    expect(s.testAfter).toMatchObject({ step: best.step, episodes: demo.tasks.test.length });
    expect(s.testAfter!.metric).toBe((await readEvalEpisodes(evalFile(on, "test", best.step))).header.metric);
    expect(s.testComparison).toMatchObject({ n: demo.tasks.test.length, meanBefore: s.testBefore!.metric, meanAfter: s.testAfter!.metric });
    expect(s.devComparison).toMatchObject({ steps: [0, 2], n: demo.tasks.dev.length, meanBefore: kept.header.metric });
    expect(summaryOf(off).devComparison).toBeUndefined();
  });

  it("is never redone by a resume: killed right after it, or resumed after checkpoints", async () => {
    const whole = join(root, "whole");
    const killed = join(root, "killed");
    await train(whole, 3);
    await expect(
      train(killed, 3, {
        onEvalAtStart: () => {
          throw new Error("killed after the step-0 evaluation");
        },
      }),
    ).rejects.toThrow("killed after");
    expect(readMetrics(killed).map((r) => r.step)).toEqual([0]);
    expect((await readBest(killed))?.step).toBe(0);
    const file = readFileSync(evalFile(killed, "dev", 0), "utf8");
    const again: string[] = [];
    await train(killed, 2, { resume: true, onEvalAtStart: (split) => again.push(split) });
    await train(killed, 3, { resume: true, onEvalAtStart: (split) => again.push(split) });
    expect(again).toEqual([]);
    expect(readFileSync(evalFile(killed, "dev", 0), "utf8")).toBe(file);
    expect(exactMetrics(killed)).toEqual(exactMetrics(whole));
    expect(await readBest(killed)).toEqual(await readBest(whole));
    expect(summaryOf(killed).devComparison).toEqual(summaryOf(whole).devComparison);
  });
});

describe("the untrained cast as best on dev", () => {
  // a learning rate of 1 wrecks the tiny model at its first update: every later dev metric is lower
  const runDir = join(root, "wrecked");
  const configFile = join(root, "wrecked.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      ...demo.config,
      models: { base: { ...demo.config.models.base, precision: "fp32", optimizer: { lr: 1 } } },
      schedule: { ...demo.config.schedule, steps: 3 },
      checkpoint: { every: 100, keep: 1 },
      eval: { every: 1 },
    }),
  );

  it("ends with best.json at step 0 and says so; eval on best is the untrained cast", async () => {
    const r = await cli("train", DEMO, "--config", configFile, "--run-dir", runDir, "--eval-test");
    expect(r.code, r.err).toBe(0);
    const evals = readMetrics(runDir).map((row) => ({ step: row.step, metric: (row.eval as { metric: number }).metric }));
    expect(evals.map((e) => e.step)).toEqual([0, 1, 2, 3]);
    expect(
      evals.slice(1).every((e) => e.metric < evals[0].metric),
      JSON.stringify(evals),
    ).toBe(true);
    expect(await readBest(runDir)).toEqual({ step: 0, metric: evals[0].metric, split: "dev" });
    expect((await listCheckpoints(runDir)).map((c) => c.step)).toEqual([3]);
    expect(r.out).toContain("best on dev: the untrained cast (step 0");
    expect(r.out).toContain("no checkpoint beat it");
    const s = summaryOf(runDir);
    expect(s.best).toEqual({ step: 0, metric: evals[0].metric, split: "dev" });
    expect(s.testAfter).toMatchObject({ step: 0, metric: s.testBefore!.metric });
    expect(s.testComparison).toMatchObject({ meanDiff: 0, ties: demo.tasks.test.length });

    const ev = await cli("eval", runDir, "--split", "dev", "--json");
    expect(ev.code, ev.err).toBe(0);
    expect(JSON.parse(ev.out)).toMatchObject({ checkpoint: "best", step: 0, metric: evals[0].metric });
    const exp = await cli("export", runDir, "--out", join(root, "export"));
    expect(exp.err).toContain("EXPORT_INIT");
  });

  it("maso compare reads the kept dev episodes and agrees with summary.devComparison", async () => {
    const r = await cli("compare", evalFile(runDir, "dev", 0), evalFile(runDir, "dev", 3), "--json");
    expect(r.code, r.err).toBe(0);
    const c = JSON.parse(r.out) as Record<string, unknown>;
    const { steps: _steps, ...inSummary } = summaryOf(runDir).devComparison!;
    expect(c).toMatchObject(inSummary);
    expect(c.meanDiff as number).toBeLessThan(0);
  });
});
