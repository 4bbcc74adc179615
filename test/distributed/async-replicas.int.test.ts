// Generation replicas under asynchronous RL: each rollout pins one weight version per model on
// every rank, and a replica generates from rank 0's kept copy of that version. A fixed-lag run with
// two replicas per model trains exactly as in-process, resumed or not, and a free-running one stays
// within η; a replica serves version v while rank 0 trains v+1 and takes v+1 only when a rollout
// pins it; a version rank 0 let go, or a batch a replica was not pinned for with rank 0, fails with
// a named error.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { replicaOf } from "../../src/distributed/nats-transport.js";
import { runCli } from "../cli/cli-harness.js";
import { exactMetrics, runTrajectories } from "../cli/run-files.js";
import { checkpointHashes, comparable, natsBesideInProcess, perModelConfig, stepItems, WORKFLOW, writeConfig } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-async-replicas-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const replicas = { planner: 2, solver: 2 };

describe("generation replicas under asynchronous RL", () => {
  it("train the same 6 fixed-lag steps as in-process (metrics, trajectories, checkpoints), resumed or not", async () => {
    const config = (nats: Record<string, unknown>) =>
      perModelConfig({
        schedule: { steps: 6, tasksPerStep: 2, concurrency: 8, maxStaleness: 1 },
        checkpoint: { every: 3, keep: 2 },
        eval: { every: 3, episodes: 4 },
        runtime: { nats: { threads: 1, ...nats } },
      });
    const local = join(root, "in-process");
    const nats = join(root, "nats");
    const a = await runCli(["train", WORKFLOW, "--config", writeConfig(root, "local.json", config({})), "--run-dir", local], {
      MASO_THREADS: "1",
    });
    expect(a.code, a.stderr).toBe(0);
    const cfg = writeConfig(root, "replicas.json", config({ replicas }));
    const b = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", nats, "--nats", "embedded"]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/started 4 worker processes/);
    const rows = exactMetrics(nats) as { step: number; roles?: Record<string, { offPolicy?: { lag: Record<string, number> } }> }[];
    expect(rows).toEqual(exactMetrics(local));
    const lagged = rows.filter((r) => Object.values(r.roles ?? {}).some((m) => m.offPolicy?.lag["1"])).map((r) => r.step);
    expect(lagged).toEqual([2, 3, 5, 6]);
    expect(runTrajectories(nats)).toEqual(runTrajectories(local));
    const steps = (await listCheckpoints(nats)).map((c) => c.step);
    expect(steps).toEqual((await listCheckpoints(local)).map((c) => c.step));
    for (const c of await listCheckpoints(nats))
      expect(await checkpointHashes(c.dir)).toEqual(await checkpointHashes(join(local, "checkpoints", c.dir.split("/").at(-1)!)));

    // resumed from step 3's checkpoint, fresh replicas take rank 0's loaded weights at the first pin
    const resumed = join(root, "resumed");
    cpSync(nats, resumed, { recursive: true });
    rmSync(join(resumed, "checkpoints", "step-000006"), { recursive: true });
    const c = await runCli(["train", "--resume", resumed, "--nats", "embedded"]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/resumed from step 3[\s\S]*started 4 worker processes|started 4 worker processes[\s\S]*resumed from step 3/);
    expect(exactMetrics(resumed)).toEqual(exactMetrics(local));
    expect(runTrajectories(resumed)).toEqual(runTrajectories(local));
  });

  it("run free-running: every rollout reads trained weights at most η steps old", async () => {
    const cfg = perModelConfig({
      schedule: { steps: 5, tasksPerStep: 2, concurrency: 8, maxStaleness: 2, asyncMode: "free" },
      checkpoint: { every: 5, keep: 1 },
      eval: { every: 0, episodes: 4 },
      runtime: { nats: { threads: 1, replicas } },
    });
    const dir = join(root, "free");
    const r = await runCli(["train", WORKFLOW, "--config", writeConfig(root, "free.json", cfg), "--run-dir", dir, "--nats", "embedded"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = readMetrics(dir) as unknown as {
      step: number;
      pipeline?: { weights: number };
      roles: Record<string, { offPolicy?: { lag: Record<string, number>; dropped: number } }>;
    }[];
    const trained = rows.filter((row) => row.step > 0);
    expect(trained.map((row) => row.step)).toEqual([1, 2, 3, 4, 5]);
    for (const row of trained)
      for (const m of Object.values(row.roles)) {
        expect(Object.keys(m.offPolicy!.lag).every((lag) => Number(lag) <= 2)).toBe(true);
        expect(m.offPolicy!.dropped).toBe(0);
      }
  });

  it("serve version v while rank 0 trains, take v+1 when pinned, and refuse a version rank 0 let go", async () => {
    process.env.MASO_THREADS = "1";
    const base = perModelConfig({ runDir: join(root, "run") });
    const raw = { ...base, schedule: { ...base.schedule, maxStaleness: 1 }, workflow: resolve(WORKFLOW) };
    const { mod, server, rt, ref, transport } = await natsBesideInProcess(raw, { replicas });
    const items = (step: number) => stepItems(mod, step);
    const versions = (model: string) =>
      Promise.all([0, 1].map(async (rank) => (await transport.host({ model, rank }, "hello", {})).version));
    const models = Object.keys(replicas);
    try {
      const both = async <R>(f: (c: typeof rt.controller) => Promise<R>) => [await f(rt.controller), await f(ref.controller)];
      const [got0, want0] = await both((c) => c.rollout(items(0), { step: 0, weightsOf: null }));
      expect(comparable(got0.rollout.trajectories)).toEqual(comparable(want0.rollout.trajectories));
      // step 1 generates from version 0 while step 0 trains version 1
      const [got1, want1] = await both(async (c) => {
        const rolled = c.rollout(items(1), { step: 1, weightsOf: -1 });
        await c.train(c === rt.controller ? got0 : want0);
        return rolled;
      });
      expect(comparable(got1.rollout.trajectories)).toEqual(comparable(want1.rollout.trajectories));
      for (const m of models) expect(await versions(m)).toEqual([1, 0]);
      const [r1, w1] = await both((c) => c.train(c === rt.controller ? got1 : want1));
      expect(r1.roles).toEqual(w1.roles);
      for (const m of models) expect(await versions(m)).toEqual([2, 0]);
      // step 2 reads the weights after step 0: every replica takes version 1 now
      const [got2, want2] = await both((c) => c.rollout(items(2), { step: 2, weightsOf: 0 }));
      expect(comparable(got2.rollout.trajectories)).toEqual(comparable(want2.rollout.trajectories));
      for (const m of models) expect(await versions(m)).toEqual([2, 1]);
      const [r2, w2] = await both((c) => c.train(c === rt.controller ? got2 : want2));
      expect(r2.roles).toEqual(w2.roles);
      for (const m of models) {
        const served = await Promise.all([0, 1].map(async (rank) => (await transport.host({ model: m, rank }, "hello", {})).generated));
        expect(served.every((n) => n > 0)).toBe(true);
      }

      // a replica that missed version 0: rank 0 let it go when version 1 was pinned
      const pin = { batch: 3, trainedThrough: -1, sha256: "0".repeat(64) };
      await expect(transport.host({ model: "solver", rank: 1 }, "pinWeights", { ...pin, version: 0 })).rejects.toMatchObject({
        code: "WEIGHTS_STALE",
        message: expect.stringMatching(/no longer keeps weight version 0/),
      });
      await expect(transport.host({ model: "planner", rank: 0 }, "weightsDigest", { version: 9 })).rejects.toMatchObject({
        code: "WEIGHTS_STALE",
      });
      // a replica pinned for another batch than rank 0: its sample never joins rank 0's batch
      await transport.host({ model: "planner", rank: 1 }, "pinWeights", { ...pin, version: 1, trainedThrough: 0 });
      const episodeId = ["x0", "x1", "x2", "x3"].find((id) => replicaOf(id, 2) === 1)!;
      const call = {
        episodeId,
        role: "planner",
        node: "plan",
        visit: 0,
        turn: 0,
        messages: [{ role: "user" as const, content: "plan" }],
        sampling: { temperature: 1, topP: 1, topK: 0 },
        stop: [],
        maxNewTokens: 4,
      };
      await expect(transport.call("planner", "generate", { call, adapter: "planner", seed: 1 })).rejects.toMatchObject({
        code: "GENERATION_VERSION",
        message: expect.stringMatching(/batch 3 .*rank 0 is pinned to batch 2/),
      });
    } finally {
      await rt.close?.();
      await server.stop();
    }
  });
});
