// Free-running asynchronous RL (schedule.asyncMode "free", η = 2) on the two-role demo, in-process: a
// rollout reads the newest trained weights when it starts generating, so its lag follows timing. A
// transport that delays one worker operation sets the timing: slow updates let the rollouts run to
// the admission bound (η + 1 steps' episodes started but untrained) and train at lag η; slow rollouts
// read fresher weights than the fixed lag would, through runTraining and through `maso train`. A
// sample more than η behind is dropped and counted, and a run resumes from a checkpoint (validly, not
// bit for bit).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { createController } from "../../src/runtime/controller/controller.js";
import type { RequestOf, ResponseOf, WorkerOp } from "../../src/runtime/protocol/messages.js";
import type { CallOptions, Transport } from "../../src/runtime/protocol/transport.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { cliInProcess, REPO } from "../cli/cli-harness.js";
import { trainDemoRun } from "../cli/demo-run.js";

const root = mkdtempSync(join(tmpdir(), "maso-free-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ETA = 2;
const BATCH = demo.config.schedule.tasksPerStep * demo.config.algorithm.groupSize;
const rawConfig = (asyncMode: "fixed-lag" | "free", eta = ETA) => ({
  ...demo.config,
  schedule: { ...demo.config.schedule, maxStaleness: eta, asyncMode },
});

/** `inner`, with every `op` call held back `ms` first: a slow update or a slow generation. */
function delaying(inner: Transport, op: WorkerOp, ms: number): Transport {
  async function call<K extends WorkerOp>(group: string, o: K, msg: RequestOf<K>, opts?: CallOptions): Promise<ResponseOf<K>> {
    if (o === op) await sleep(ms);
    return inner.call(group, o, msg, opts);
  }
  return {
    call,
    groups: () => inner.groups(),
    traffic: () => inner.traffic(),
    resetTraffic: () => inner.resetTraffic(),
  };
}

type Row = {
  step: number;
  episodes: { count: number };
  pipeline: { weights: number; ahead: Record<string, number> };
  roles: Record<string, { offPolicy: { lag: Record<string, number>; dropped: number } }>;
};

interface Watched {
  rows: Row[];
  /** the most episodes whose rollout had started generating and whose step's row was not yet written */
  peakUntrained: number;
}

/**
 * Trains the demo for `steps` steps (checkpoints every 3, so drains after steps 3 and 6) with `op`
 * delayed `ms` on the way to the worker groups; counts, from the run's own callbacks, the steps
 * started but not yet trained.
 */
async function train(
  mode: "fixed-lag" | "free",
  dir: string,
  steps: number,
  delay: { op: WorkerOp; ms: number },
  resume = false,
): Promise<Watched> {
  const raw = { ...rawConfig(mode), runDir: dir };
  const { config, cast } = resolveRunConfig(raw, { roles: ["planner", "solver"] });
  const opts = runtimeFromConfig(config, cast, { ...demo, tasks: { train: demo.tasks.train } });
  const started = new Set<number>();
  let untrained = 0;
  let peakUntrained = 0;
  await trainDemoRun(rawConfig(mode), dir, steps, {
    resume,
    checkpointEvery: 3,
    build: async (startStep) => {
      const rt = await createRuntime({ ...opts, startStep });
      const transport = delaying(rt.transport, delay.op, delay.ms);
      return { ...rt, transport, controller: createController({ ...opts, startStep, cast: rt.cast, transport }) };
    },
    onRollout: (step, _done, total) => {
      if (started.has(step)) return;
      started.add(step);
      untrained += total;
      peakUntrained = Math.max(peakUntrained, untrained);
    },
    onStep: (row) => {
      untrained -= row.episodes.count;
    },
  });
  return { rows: readMetrics(dir) as unknown as Row[], peakUntrained };
}

const lags = (rows: Row[]) => rows.map((r) => Object.keys(r.roles.planner.offPolicy.lag).map(Number));

describe("free-running asynchronous RL (asyncMode free, maxStaleness 2)", () => {
  it("admits at most η + 1 steps' episodes; slow updates make every rollout run to the bound and train at lag η", async () => {
    const { rows, peakUntrained } = await train("free", join(root, "slow-update"), 6, { op: "update", ms: 500 });
    expect(peakUntrained).toBe((ETA + 1) * BATCH);
    // drains after steps 3 and 6: each window fills to η steps ahead, every rollout reading the newest trained weights
    expect(lags(rows)).toEqual([[0], [1], [2], [0], [1], [2]]);
    expect(rows.map((r) => r.pipeline.weights)).toEqual([0, 0, 0, 3, 3, 3]);
    for (const r of rows) {
      expect(r.episodes.count).toBe(BATCH);
      for (const m of Object.values(r.roles)) expect(m.offPolicy.dropped).toBe(0);
    }
  });

  it("reads fresher weights than a fixed lag when rollouts are the slow part", async () => {
    const slowRollout = { op: "generate" as const, ms: 600 };
    const free = await train("free", join(root, "slow-gen-free"), 3, slowRollout);
    const fixed = await train("fixed-lag", join(root, "slow-gen-fixed"), 3, slowRollout);
    expect(fixed.peakUntrained).toBeLessThanOrEqual((ETA + 1) * BATCH);
    expect(free.peakUntrained).toBeLessThanOrEqual((ETA + 1) * BATCH);
    // step 3's rollout starts when step 2's ends, by when step 1 has trained: the fixed lag still reads step 0's weights
    expect(lags(fixed.rows)).toEqual([[0], [1], [2]]);
    expect(lags(free.rows)).toEqual([[0], [1], [1]]);
    expect(free.rows.map((r) => r.pipeline.weights)).toEqual([0, 0, 1]);
  });

  it("resumes from a checkpoint: the first rollout reads the loaded weights, every lag stays within η", async () => {
    const dir = join(root, "resume");
    const delay = { op: "update" as const, ms: 100 };
    await train("free", dir, 4, delay);
    expect((await listCheckpoints(dir)).map((c) => c.step)).toEqual([4]);
    const { rows } = await train("free", dir, 6, delay, true);
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(lags(rows)[4]).toEqual([0]);
    expect(Math.max(...lags(rows).flat())).toBeLessThanOrEqual(ETA);
    expect((await listCheckpoints(dir)).at(-1)?.step).toBe(6);
  });
});

describe("maso train with asyncMode free", () => {
  it("passes the mode to the run: with slow rollouts, step 3 reads step 1's weights", async () => {
    const runDir = join(root, "cli");
    const cfg = join(root, "cli.json");
    const schedule = { ...demo.config.schedule, steps: 3, maxStaleness: ETA, asyncMode: "free" };
    writeFileSync(cfg, JSON.stringify({ ...demo.config, schedule, checkpoint: { every: 3, keep: 1 } }));
    const r = await cliInProcess("train", join(REPO, "test/async/fixtures/slow-rollout-demo.ts"), "--config", cfg, "--run-dir", runDir);
    expect(r.code, r.err).toBe(0);
    const rows = (readMetrics(runDir) as unknown as Row[]).filter((row) => row.step > 0);
    expect(lags(rows)).toEqual([[0], [1], [1]]);
    expect(rows.map((row) => row.pipeline.weights)).toEqual([0, 0, 1]);
  });
});

describe("samples more than η behind", () => {
  it("are dropped and counted, never trained", async () => {
    const raw = { ...rawConfig("free", 1), runDir: join(root, "drop") };
    const { config, cast } = resolveRunConfig(raw, { roles: ["planner", "solver"] });
    const rt = await createRuntime(runtimeFromConfig(config, cast, { ...demo, tasks: { train: demo.tasks.train } }));
    const items = (step: number) =>
      demo.tasks.train
        .slice(0, 2)
        .map((task, i) => ({ episode: { id: `s${step}-e${i}`, state: demo.initialState(task), taskId: demo.taskId(task) }, task }));
    await rt.controller.step(items(0));
    // three rollouts on the weights after step 0, past the bound the run loop keeps: step 3's are 2 steps behind
    const rolled = [];
    for (const step of [1, 2, 3]) rolled.push(await rt.controller.rollout(items(step), { step, weightsOf: 0 }));
    const reports = [];
    for (const r of rolled) reports.push(await rt.controller.train(r));
    const dropped = reports.map((r) => r.roles.planner.offPolicy?.dropped);
    expect(dropped).toEqual([0, 0, 2]);
    expect(reports[2].roles.planner.updated).toBe(false);
    await rt.close?.({ finished: true });
  });
});

describe("asyncMode in the run config", () => {
  it("defaults to a fixed lag and refuses free-running without maxStaleness", () => {
    const ok = resolveRunConfig({ ...demo.config, runDir: join(root, "cfg") }, { roles: ["planner", "solver"] });
    expect(ok.config.schedule.asyncMode).toBe("fixed-lag");
    const bad = { ...rawConfig("free", 0), runDir: join(root, "bad") };
    expect(() => resolveRunConfig(bad, { roles: ["planner", "solver"] })).toThrow(/schedule\.asyncMode/);
  });
});
