// runTraining in-process: stopping after k steps and resuming gives the same metrics and the same
// final checkpoint files (weights, adapters, value head, AdamW moments, update counters) as one
// uninterrupted run — for the demo's GRPO config and for a critic config (gae-action, value head,
// KL reference, round-robin updates, critic warm-up) where the resumed step number matters; and
// episode concurrency does not change the numbers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { lastCheckpointFiles, trainDemoRun } from "./demo-run.js";
import { exactMetrics as exact } from "./run-files.js";

const root = mkdtempSync(join(tmpdir(), "maso-train-run-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CRITIC = {
  ...demo.config,
  models: { base: { ...demo.config.models.base, valueHead: { hidden: 16 } } },
  algorithm: { estimator: "gae-action", klCoef: 0.05, updateOrder: "round-robin", criticWarmupSteps: 1, minibatchSize: 8, epochs: 2 },
};

const train = (
  raw: object,
  runDir: string,
  steps: number,
  resume: boolean,
  onRollout?: (step: number, done: number, total: number) => void,
) => trainDemoRun(raw, runDir, steps, { resume, onRollout });

describe("runTraining: stop and resume equals one run", () => {
  for (const [name, raw] of [
    ["grpo, one adapter per role", demo.config],
    ["gae-action critic, KL reference, round-robin, critic warm-up", CRITIC],
  ] as const) {
    it(name, async () => {
      const ref = join(root, `${name.slice(0, 4)}-ref`);
      const split = join(root, `${name.slice(0, 4)}-split`);
      await train(raw, ref, 6, false);
      const first = await train(raw, split, 3, false);
      expect(first.rows.map((r) => r.step)).toEqual([1, 2, 3]);
      const second = await train(raw, split, 6, true);
      expect(second.startStep).toBe(3);
      expect(exact(split)).toEqual(exact(ref));
      const files = await lastCheckpointFiles(ref);
      expect(Object.keys(files).some((f) => f.endsWith("optimizers.safetensors"))).toBe(true);
      if (raw === CRITIC) {
        expect(Object.keys(files).some((f) => f.endsWith("value_head.safetensors"))).toBe(true);
        const rows = exact(ref);
        const updated = (step: number, role: string) => (rows[step - 1].roles as Record<string, { updated: number }>)[role].updated;
        expect([1, 2, 3, 4].map((s) => [updated(s, "planner"), updated(s, "solver")])).toEqual([
          [0, 0],
          [0, 1],
          [1, 0],
          [0, 1],
        ]);
      }
      expect(await lastCheckpointFiles(split)).toEqual(files);
    });
  }

  it("episode concurrency does not change the numbers (1 in flight vs 8)", async () => {
    const one = join(root, "conc-1");
    const eight = join(root, "conc-8");
    await train({ ...demo.config, schedule: { ...demo.config.schedule, concurrency: 1 } }, one, 3, false);
    await train({ ...demo.config, schedule: { ...demo.config.schedule, concurrency: 8 } }, eight, 3, false);
    expect(exact(one)).toEqual(exact(eight));
    expect(await lastCheckpointFiles(one)).toEqual(await lastCheckpointFiles(eight));
  });

  it("each step's rollout reports its progress: 0, then every finished episode", async () => {
    const calls: [number, number, number][] = [];
    await train(demo.config, join(root, "rollout-progress"), 2, false, (step, done, total) => calls.push([step, done, total]));
    const n = demo.config.schedule.tasksPerStep * demo.config.algorithm.groupSize;
    const want = (step: number) => Array.from({ length: n + 1 }, (_, i): [number, number, number] => [step, i, n]);
    expect(calls).toEqual([...want(1), ...want(2)]);
  });
});
