// Checkpoint selection on dev: a tiny run evaluating on dev every step records in
// checkpoints/best.json the step with the highest dev metric in metrics.jsonl, keeps that
// checkpoint through keep-N pruning, and `maso eval` restores exactly it (its dev metric reproduces
// the logged one). A stopped-and-resumed run ends with the same pointer and checkpoints; the
// untrained cast ("before RL") evaluates the same from a workflow file as from the run directory.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as demo from "./fixtures/demo-with-test.js";
import { bestOfRows, readBest } from "../../src/checkpoint/best.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { runTraining } from "../../src/run/rl-run.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";

const DEMO = join(import.meta.dirname, "fixtures", "demo-with-test.ts");
const BARE_DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");
const STEPS = 8;
const root = mkdtempSync(join(tmpdir(), "maso-best-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// eval on dev every step, checkpoints only at the end, keep 1: the best one survives only if protected
// (a high learning rate so that greedy outputs, and so the dev metric, change from step to step)
const base = { ...demo.config.models.base, optimizer: { lr: 0.05 } };
const CONFIG = {
  ...demo.config,
  models: { base },
  schedule: { ...demo.config.schedule, steps: STEPS },
  checkpoint: { every: 100, keep: 1 },
  eval: { every: 1 },
};
const configFile = join(root, "config.json");
writeFileSync(configFile, JSON.stringify(CONFIG));

const evals = (runDir: string) =>
  readMetrics(runDir).map((r) => ({ step: r.step, metric: (r.eval as { metric: number } | undefined)?.metric }));
const json = async (...argv: string[]) => {
  const r = await cli(...argv);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as { checkpoint: string; step: number; metric: number; episodes: number };
};

describe("best-on-dev checkpoint", () => {
  const runDir = join(root, "run");

  it("records the step with the highest dev metric and keeps its checkpoint", async () => {
    const r = await cli("train", DEMO, "--config", configFile, "--run-dir", runDir);
    expect(r.code, r.err).toBe(0);
    const logged = evals(runDir);
    expect(logged.every((e) => typeof e.metric === "number")).toBe(true);
    const top = Math.max(...logged.map((e) => e.metric!));
    const want = logged.find((e) => e.metric === top)!; // earliest on ties
    expect(want.step, "this seed's best dev step is not the last one, so pruning is exercised").toBeLessThan(STEPS);
    expect(await readBest(runDir)).toEqual({ step: want.step, metric: top, split: "dev" });
    const kept = (await listCheckpoints(runDir)).map((c) => c.step);
    expect(kept).toEqual([...new Set([want.step, STEPS])].sort((a, b) => a - b));
    const summary = JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8")) as { best: { step: number } };
    expect(summary.best.step).toBe(want.step);
    console.log(`dev metrics ${logged.map((e) => e.metric!.toFixed(3)).join(" ")}; best step ${want.step}`);
  });

  it("maso eval restores the best checkpoint by default, and the newest with --checkpoint latest", async () => {
    const best = (await readBest(runDir))!;
    const logged = evals(runDir);
    const byDefault = await json("eval", runDir, "--split", "dev", "--json");
    expect(byDefault).toMatchObject({ checkpoint: "best", step: best.step, episodes: demo.tasks.dev.length });
    expect(byDefault.metric).toBe(best.metric);
    expect(await json("eval", runDir, "--split", "dev", "--json", "--checkpoint", "best")).toEqual(byDefault);
    const latest = await json("eval", runDir, "--split", "dev", "--json", "--checkpoint", "latest");
    expect(latest).toMatchObject({ checkpoint: "latest", step: STEPS, metric: logged.at(-1)!.metric });
    expect((await cli("eval", runDir, "--checkpoint", "newest")).code).toBe(2);
    const kept = new Set((await listCheckpoints(runDir)).map((c) => c.step));
    const pruned = Array.from({ length: STEPS }, (_, i) => i + 1).find((s) => !kept.has(s))!;
    expect((await cli("eval", runDir, "--checkpoint", String(pruned))).err).toContain("CHECKPOINT_MISSING");
  });

  it("maso export takes the best checkpoint by default, like eval; --checkpoint latest or a step the others", async () => {
    const best = (await readBest(runDir))!;
    const exported = async (...flags: string[]) => {
      const out = join(root, `export-${flags.join("-") || "default"}`);
      // the base stays frozen: the planner's adapter, merged, is what training changed
      const r = await cli("export", runDir, "--out", out, "--adapter", "planner", ...flags);
      expect(r.err).toBe("");
      return { out: r.out, weights: readFileSync(join(out, "model.safetensors")) };
    };
    const byDefault = await exported();
    expect(byDefault.out).toContain(`step ${best.step})`);
    expect((await exported("--checkpoint", "best")).weights.equals(byDefault.weights)).toBe(true);
    expect((await exported("--checkpoint", String(best.step))).weights.equals(byDefault.weights)).toBe(true);
    const latest = await exported("--checkpoint", "latest");
    expect(latest.out).toContain(`step ${STEPS})`);
    expect(latest.weights.equals(byDefault.weights), "the best and the last step hold different weights").toBe(false);
    expect((await cli("export", runDir, "--out", join(root, "x"), "--checkpoint", "newest")).code).toBe(2);
    expect((await cli("export", runDir, "--out", join(root, "x"), "--checkpoint", "1", "--step", "1")).code).toBe(2);
  });

  it("before RL: a workflow file's untrained cast equals the run's --checkpoint init", async () => {
    const fromFile = await json("eval", DEMO, "--config", configFile, "--split", "dev", "--json");
    expect(fromFile).toMatchObject({ checkpoint: "init", step: 0, episodes: demo.tasks.dev.length });
    const fromRun = await json("eval", runDir, "--split", "dev", "--json", "--checkpoint", "init");
    expect(fromRun.metric).toBe(fromFile.metric);
    const noTest = await cli("eval", BARE_DEMO, "--split", "test");
    expect(noTest.code).toBe(1);
    expect(noTest.err).toContain("EVAL_NO_TASKS");
  });

  it("a run stopped and resumed ends with the same pointer and checkpoints", async () => {
    const train = async (dir: string, steps: number, resume: boolean) => {
      const { config, cast } = resolveRunConfig({ ...CONFIG, runDir: dir }, { roles: ["planner", "solver"] });
      const opts = runtimeFromConfig(config, cast, demo);
      const ev = { every: 1, tasks: demo.tasks.dev, episodes: null, metric: demo.metric, selectBest: true };
      return runTraining({
        ...{ runDir: dir, tasks: demo.tasks.train, initialState: demo.initialState, taskId: demo.taskId },
        build: (startStep) => createRuntime({ ...opts, startStep }),
        ...{ steps, tasksPerStep: 2, groupSize: 4, seed: config.seed, checkpointEvery: 3, keep: 1, eval: ev, resume },
      });
    };
    const whole = join(root, "whole");
    const split = join(root, "split");
    await train(whole, STEPS, false);
    await train(split, 4, false);
    await train(split, STEPS, true);
    expect(await readBest(split)).toEqual(await readBest(whole));
    expect(await listCheckpoints(split).then((c) => c.map((x) => x.step))).toEqual(
      await listCheckpoints(whole).then((c) => c.map((x) => x.step)),
    );
    const rows = readMetrics(whole);
    expect(bestOfRows(rows, [(await readBest(whole))!.step])).toEqual(await readBest(whole));
  });
});
