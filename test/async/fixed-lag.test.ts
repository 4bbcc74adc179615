// Asynchronous RL with a fixed lag (schedule.maxStaleness η = 1) on the two-role demo, in-process:
// each step after the first behind a drain point trains samples generated one weight version back
// (lag histogram in the row), the run is the same whatever the episode concurrency (the lag is set by
// step numbers, not timing), and a run resumed from a checkpoint equals one uninterrupted run
// (metrics and every checkpoint file). η = 0's identity with the synchronous loop is the rest of the
// suite: every other run here goes through the same code with η = 0.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { readTrajectories, trajectoryFile } from "../../src/workflow/trajectory-writer.js";
import { lastCheckpointFiles, trainDemoRun } from "../cli/demo-run.js";
import { exactMetrics as exact } from "../cli/run-files.js";

const root = mkdtempSync(join(tmpdir(), "maso-async-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const withStaleness = (eta: number, concurrency = demo.config.schedule.concurrency) => ({
  ...demo.config,
  schedule: { ...demo.config.schedule, maxStaleness: eta, concurrency },
});
const train = (raw: object, runDir: string, steps: number, resume = false) => trainDemoRun(raw, runDir, steps, { resume });

type Row = {
  step: number;
  pipeline?: { weights: number; ahead: Record<string, number> };
  roles: Record<string, { offPolicy?: { lag: Record<string, number>; dropped: number; importance: Record<string, number> } }>;
};

describe("fixed-lag asynchronous RL (maxStaleness 1)", () => {
  it("trains each step between two drain points on samples one version old, and reports it", async () => {
    const dir = join(root, "lag");
    await train(withStaleness(1), dir, 4);
    const sync = join(root, "sync");
    await train(withStaleness(0), sync, 4);
    const rows = readMetrics(dir) as unknown as Row[];
    // checkpoints every 2 steps drain the pipeline: steps 1 and 3 read fresh weights, 2 and 4 one version back
    const lags = rows.map((r) => Object.keys(r.roles.planner.offPolicy?.lag ?? {}));
    expect(lags).toEqual([["0"], ["1"], ["0"], ["1"]]);
    // the weights each rollout read, by the step they hold: step 2's rollout ran beside step 1's training
    expect(rows.map((r) => r.pipeline)).toEqual([
      { weights: 0, ahead: { "1": 0 } },
      { weights: 0, ahead: {} },
      { weights: 2, ahead: { "1": 2 } },
      { weights: 2, ahead: {} },
    ]);
    for (const r of rows) {
      const o = r.roles.planner.offPolicy!;
      expect(o.dropped).toBe(0);
      expect(o.importance.max).toBeLessThanOrEqual(2);
      expect(o.importance.mean).toBeGreaterThan(0);
    }
    // lag 0: behaviour and proximal policy are the same weights, so every weight is 1 up to batch composition
    expect(Math.abs(rows[0].roles.planner.offPolicy!.importance.mean - 1)).toBeLessThan(1e-3);
    const syncRows = readMetrics(sync) as unknown as Row[];
    expect(syncRows.every((r) => r.roles.planner.offPolicy === undefined && r.pipeline === undefined)).toBe(true);
    // step 1 generates and trains exactly as the synchronous loop does; step 2 generated with older weights
    const outputs = async (d: string, step: number) =>
      JSON.stringify((await readTrajectories(trajectoryFile(d, step))).map((t) => t.records.map((r) => r.output)));
    expect(await outputs(dir, 1)).toBe(await outputs(sync, 1));
    expect(await outputs(dir, 2)).not.toBe(await outputs(sync, 2));
  });

  it("does not depend on timing: 1 episode in flight or 8 give the same run", async () => {
    const one = join(root, "conc-1");
    const eight = join(root, "conc-8");
    await train(withStaleness(1, 1), one, 3);
    await train(withStaleness(1, 8), eight, 3);
    expect(exact(one)).toEqual(exact(eight));
    expect(await lastCheckpointFiles(one)).toEqual(await lastCheckpointFiles(eight));
  });

  it("resumes exactly: 4 steps, then a resume to 6, equal 6 steps in one run", async () => {
    const ref = join(root, "ref");
    const split = join(root, "split");
    await train(withStaleness(1), ref, 6);
    await train(withStaleness(1), split, 4);
    const second = await train(withStaleness(1), split, 6, true);
    expect(second.startStep).toBe(4);
    expect(exact(split)).toEqual(exact(ref));
    expect(await lastCheckpointFiles(split)).toEqual(await lastCheckpointFiles(ref));
  });
});

describe("fixed-lag asynchronous RL with several updates a step", () => {
  // a critic's update and HAPPO's agent-by-agent updates move a model's weight version several times
  // a step: lag is counted in steps, so nothing is dropped and every role updates as it does synchronously
  for (const [order, estimator] of [
    ["happo", "grpo"],
    ["round-robin", "gae-action"],
  ] as const)
    it(`${order} with ${estimator}`, async () => {
      const raw = (eta: number) => ({
        ...withStaleness(eta),
        models: { base: { ...demo.config.models.base, valueHead: { hidden: 16 } } },
        algorithm: { estimator, updateOrder: order },
      });
      const updated = (dir: string) =>
        (readMetrics(dir) as unknown as { roles: Record<string, { updated: number }> }[]).map((r) => [
          r.roles.planner.updated,
          r.roles.solver.updated,
        ]);
      const lagged = join(root, `${order}-1`);
      const sync = join(root, `${order}-0`);
      await train(raw(1), lagged, 4);
      await train(raw(0), sync, 4);
      expect(updated(lagged)).toEqual(updated(sync));
      const rows = readMetrics(lagged) as unknown as Row[];
      const lags = rows.map((r) => Object.values(r.roles).flatMap((m) => Object.keys(m.offPolicy?.lag ?? {})));
      expect(lags.map((l) => [...new Set(l)])).toEqual([["0"], ["1"], ["0"], ["1"]]);
      expect(rows.every((r) => Object.values(r.roles).every((m) => (m.offPolicy?.dropped ?? 0) === 0))).toBe(true);
    });
});

describe("maxStaleness in the run config", () => {
  it("refuses a rollback on collapse and data-parallel ranks with a reason, and takes generation replicas", () => {
    const bad = {
      ...withStaleness(1),
      failures: { onCollapse: "rollback" },
      runtime: { transport: "nats", nats: { replicas: { base: 2 }, ranks: 2 } },
    };
    const roles = { roles: ["planner", "solver"] };
    let message = "";
    try {
      resolveRunConfig({ ...bad, runDir: join(root, "bad") }, roles);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/failures\.onCollapse[\s\S]*schedule\.maxStaleness[\s\S]*runtime\.nats\.ranks/);
    expect(message).not.toMatch(/replicas/);
    const replicated = { ...withStaleness(1), runtime: { transport: "nats", nats: { replicas: { base: 2 } } } };
    expect(resolveRunConfig({ ...replicated, runDir: join(root, "replicated") }, roles).config.runtime.nats.replicas).toEqual({ base: 2 });
  });
});
