// The same run of a workflow with one model per role, in-process and over NATS (an embedded
// nats-server, one worker process per model), synchronous and fixed-lag asynchronous: identical
// metrics (wall-clock fields aside), identical trajectories and byte-identical checkpoints at every
// step both runs wrote. Both sides run their kernels on one thread: the engine's sums are split by
// thread count, so a model computes bit-identically only at the same count.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { runCli } from "../cli/cli-harness.js";
import { exactMetrics, runTrajectories } from "../cli/run-files.js";
import { WORKFLOW, checkpointHashes, perModelConfig, writeConfig } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-nats-exact-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Trains `cfg` in-process and over NATS (one worker process per model); returns both run directories. */
async function runBoth(name: string, cfg: string): Promise<{ local: string; nats: string; stdout: string }> {
  const local = join(root, `${name}-in-process`);
  const nats = join(root, `${name}-nats`);
  const a = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", local], { MASO_THREADS: "1" });
  expect(a.code, a.stderr).toBe(0);
  const b = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", nats, "--nats", "embedded"]);
  expect(b.code, b.stderr).toBe(0);
  return { local, nats, stdout: b.stdout };
}

/** Both runs wrote the same trajectories and byte-identical checkpoints at every step. */
async function expectSameFiles(local: string, nats: string): Promise<void> {
  expect(runTrajectories(nats)).toEqual(runTrajectories(local));
  const steps = (await listCheckpoints(nats)).map((c) => c.step);
  expect(steps).toEqual((await listCheckpoints(local)).map((c) => c.step));
  for (const c of await listCheckpoints(nats)) {
    const theirs = await checkpointHashes(c.dir);
    expect(Object.keys(theirs).length).toBeGreaterThan(5);
    expect(theirs).toEqual(await checkpointHashes(join(local, "checkpoints", c.dir.split("/").at(-1)!)));
  }
}

describe("in-process and over NATS", () => {
  it("train the same 10 steps to the same metrics, trajectories and checkpoints", async () => {
    const cfg = writeConfig(
      root,
      "config.json",
      perModelConfig({
        schedule: { steps: 10, tasksPerStep: 2, concurrency: 8 },
        checkpoint: { every: 5, keep: 2 },
        eval: { every: 5, episodes: 4 },
        runtime: { nats: { threads: 1 } },
      }),
    );
    const { local, nats, stdout } = await runBoth("sync", cfg);
    expect(stdout).toMatch(/started 2 worker processes/);
    expect(exactMetrics(nats)).toEqual(exactMetrics(local));
    // the untrained cast's dev evaluation (row 0), then the 10 steps
    expect(exactMetrics(nats).map((r) => r.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await listCheckpoints(nats)).map((c) => c.step)).toContain(10);
    await expectSameFiles(local, nats);
  });

  // asynchronous RL with a fixed lag: each worker process pins its generation weights per rollout
  // while it trains the step before; the lag follows step numbers, so where the work runs changes nothing
  it("train the same 6 fixed-lag asynchronous steps (maxStaleness 1) to the same metrics, trajectories and checkpoints", async () => {
    const cfg = writeConfig(
      root,
      "async.json",
      perModelConfig({
        schedule: { steps: 6, tasksPerStep: 2, concurrency: 8, maxStaleness: 1 },
        checkpoint: { every: 3, keep: 2 },
        eval: { every: 3, episodes: 4 },
        runtime: { nats: { threads: 1 } },
      }),
    );
    const { local, nats } = await runBoth("async", cfg);
    const rows = exactMetrics(nats) as { step: number; roles?: Record<string, { offPolicy?: { lag: Record<string, number> } }> }[];
    expect(rows).toEqual(exactMetrics(local));
    // steps 2, 3, 5 and 6 trained samples one version old; 1 and 4 follow a drain point
    const lagged = rows.filter((r) => Object.values(r.roles ?? {}).some((m) => m.offPolicy?.lag["1"])).map((r) => r.step);
    expect(lagged).toEqual([2, 3, 5, 6]);
    await expectSameFiles(local, nats);
  });
});
