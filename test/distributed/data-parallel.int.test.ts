// Data-parallel ranks over a real nats-server: two ranks per trained model (four worker processes)
// generate what one in-process worker group generates, train the same update to fp32 rounding,
// and every rank ends each update with rank 0's trained weights (checked by digest at the barrier).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { encodeJson, rpcClient } from "../../src/distributed/rpc.js";
import { newRunKey, parseRunKey, runSealer, senderId } from "../../src/distributed/run-key.js";
import { opSubject } from "../../src/distributed/subjects.js";
import { packTensors } from "../../src/distributed/weights.js";
import { rankCounts } from "../../src/distributed/nats-runtime.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { runCli } from "../cli/cli-harness.js";
import { exactMetrics } from "../cli/run-files.js";
import { WORKFLOW, checkpointHashes, comparable, natsBesideInProcess, perModelConfig, stepItems, writeConfig } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-dp-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The update figures of a step's roles, which data-parallel ranks reproduce to fp32 rounding. */
const UPDATE_FIGURES = ["entropy", "klRef", "clipFrac", "approxKl", "gradNorm", "responseLength", "valueLoss"] as const;

const RUN = "dp-run";

/**
 * Holders of the run key who are not rank 0 of the model get no share, step or training state:
 * another model's worker, a rank asking another rank; a token holder without the key gets no answer.
 */
async function expectInsidersRefused(server: { url: string; token: string }, runKey: string): Promise<void> {
  const nc = await connect({ servers: server.url, token: server.token });
  try {
    const as = (who: string) => rpcClient(nc, RUN, runSealer(parseRunKey(runKey, "CONFIG_RUN_KEY"), senderId(who)));
    const ask = (who: string, to: { model: string; rank: number }, op: string, body: Uint8Array) =>
      as(who).request(opSubject(RUN, to, op), body, { timeoutMs: 5000, label: `${who} ${op}`, worker: `${to.model}/${to.rank}` });
    const step = packTensors({ units: null }, []);
    await expect(ask("planner/0", { model: "solver", rank: 1 }, "dpStep", step)).rejects.toMatchObject({ code: "DATA_PARALLEL_DENIED" });
    await expect(ask("solver/1", { model: "solver", rank: 1 }, "dpStep", step)).rejects.toMatchObject({ code: "DATA_PARALLEL_DENIED" });
    await expect(ask("planner/1", { model: "solver", rank: 0 }, "trainState", encodeJson({}))).rejects.toMatchObject({
      code: "WEIGHTS_DENIED",
    });
    const unsealed = await nc.request(opSubject(RUN, { model: "solver", rank: 1 }, "dpStep"), step, { timeout: 1500 }).catch(() => null);
    expect(unsealed).toBeNull();
  } finally {
    await nc.close();
  }
}

describe("data-parallel ranks over NATS", () => {
  it("train like one rank to fp32 rounding, every rank holding rank 0's weights after each update", async () => {
    process.env.MASO_THREADS = "1";
    const raw = { ...perModelConfig({ runDir: join(root, "run") }), workflow: resolve(WORKFLOW) };
    const runKey = newRunKey();
    const { mod, server, rt, ref, transport } = await natsBesideInProcess(raw, { run: RUN, ranks: 2 }, { runKey });
    try {
      for (let step = 1; step <= 2; step++) {
        const items = stepItems(mod, step);
        const [got, want] = [await rt.controller.step(items), await ref.controller.step(items)];
        // the first rollout reads the same starting weights; later ones read weights equal to fp32 rounding
        if (step === 1) expect(comparable(got.trajectories)).toEqual(comparable(want.trajectories));
        if (step === 1)
          for (const [role, m] of Object.entries(want.roles)) {
            expect(m.updated).toBe(true);
            expect(got.roles[role].reward).toBe(m.reward);
            for (const f of UPDATE_FIGURES) {
              if (Number.isNaN(m[f])) expect(got.roles[role][f]).toBeNaN();
              else expect(Math.abs(got.roles[role][f] - m[f])).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(m[f])));
            }
          }
        for (const model of ["planner", "solver"]) {
          const hellos = await Promise.all([0, 1].map((rank) => transport.host({ model, rank }, "hello", {})));
          expect(hellos.map((h) => h.version)).toEqual([step, step]);
          // rank 1 scored and trained its shares
          expect(hellos[1].shares?.scored).toBeGreaterThan(0);
          expect(hellos[1].shares?.trained).toBeGreaterThan(0);
        }
      }
      await expectInsidersRefused(server, runKey);
    } finally {
      await rt.close?.();
      await server.stop();
    }
  });

  it("put every trained model on the ranks and keep replicas for frozen ones", () => {
    const models = new Map([
      ["policy", { train: "lora" }],
      ["judge", { train: "frozen" }],
    ]);
    expect(rankCounts(models, { replicas: { judge: 3 }, ranks: 2 })).toEqual({
      counts: { policy: 2, judge: 3 },
      dataParallel: { policy: 2 },
    });
    expect(() => rankCounts(models, { replicas: { policy: 2 }, ranks: 2 })).toThrow(/CONFIG_RANKS|replicas/);
  });
});

describe("maso train --ranks 2", () => {
  // every rank's training state after a checkpoint load is rank 0's, and the split of each minibatch
  // and the order of the sums follow the samples, so a data-parallel run resumes exactly
  it("resumes from a checkpoint to what the uninterrupted data-parallel run trains", async () => {
    const cfg = writeConfig(
      root,
      "dp.json",
      perModelConfig({
        schedule: { steps: 4, tasksPerStep: 2, concurrency: 8 },
        checkpoint: { every: 2, keep: 3 },
        eval: { every: 0 },
        runtime: { nats: { threads: 1 } },
      }),
    );
    const whole = join(root, "dp-whole");
    const a = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", whole, "--nats", "embedded", "--ranks", "2"]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toMatch(/started 4 worker processes/);
    const cut = join(root, "dp-cut");
    const b = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", cut, "--steps", "2", "--nats", "embedded", "--ranks", "2"]);
    expect(b.code, b.stderr).toBe(0);
    // the shorter run's saved config, extended to the whole run's steps (what --resume reads)
    const saved = JSON.parse(readFileSync(join(cut, "config.json"), "utf8"));
    writeFileSync(join(cut, "config.json"), JSON.stringify({ ...saved, schedule: { ...saved.schedule, steps: 4 } }));
    const c = await runCli(["train", "--resume", cut, "--nats", "embedded", "--ranks", "2"]);
    expect(c.code, c.stderr).toBe(0);
    // the shorter run also evaluated at its last step (2): the training figures are what must agree
    const training = (dir: string) => exactMetrics(dir).map(({ eval: _, ...row }) => row);
    expect(training(cut)).toEqual(training(whole));
    const last = (await listCheckpoints(whole)).at(-1)!;
    expect(last.step).toBe(4);
    expect(await checkpointHashes(join(cut, "checkpoints", last.dir.split("/").at(-1)!))).toEqual(await checkpointHashes(last.dir));
  });
});
