// Asynchronous RL over NATS: the same fixed-lag run (schedule.maxStaleness 1, one worker process per
// model, each pinning its generation weights per rollout while it trains the step before) gives the
// metrics, trajectories and checkpoints of the in-process run. The lag is set by step numbers, so
// where the work runs cannot change what trains.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { runCli } from "../cli/cli-harness.js";
import { exactMetrics, runTrajectories } from "../cli/run-files.js";
import { WORKFLOW, checkpointHashes, perModelConfig, writeConfig } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-nats-async-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("fixed-lag asynchronous RL in-process and over NATS", () => {
  it("trains the same 6 steps to the same metrics, trajectories and checkpoints", async () => {
    const cfg = writeConfig(
      root,
      "config.json",
      perModelConfig({
        schedule: { steps: 6, tasksPerStep: 2, concurrency: 8, maxStaleness: 1 },
        checkpoint: { every: 3, keep: 2 },
        eval: { every: 3, episodes: 4 },
        runtime: { nats: { threads: 1 } },
      }),
    );
    const local = join(root, "in-process");
    const nats = join(root, "nats");
    const a = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", local], { MASO_THREADS: "1" });
    expect(a.code, a.stderr).toBe(0);
    const b = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", nats, "--nats", "embedded"]);
    expect(b.code, b.stderr).toBe(0);
    const rows = exactMetrics(nats) as { step: number; roles?: Record<string, { offPolicy?: { lag: Record<string, number> } }> }[];
    expect(rows).toEqual(exactMetrics(local));
    // steps 2, 3, 5 and 6 trained samples one version old; 1 and 4 follow a drain point
    const lagged = rows.filter((r) => Object.values(r.roles ?? {}).some((m) => m.offPolicy?.lag["1"])).map((r) => r.step);
    expect(lagged).toEqual([2, 3, 5, 6]);
    expect(runTrajectories(nats)).toEqual(runTrajectories(local));
    for (const c of await listCheckpoints(nats))
      expect(await checkpointHashes(c.dir)).toEqual(await checkpointHashes(join(local, "checkpoints", c.dir.split("/").at(-1)!)));
  });
});
