// Two workers for one model and rank: one started after the first already serves is refused at once
// (WORKER_DUPLICATE, naming the live one), and so is the loser of two started together (their claims
// race: membership.ts); the run goes on with the one that serves.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { newRunKey } from "../../src/distributed/run-key.js";
import { type CliRun, startCli } from "../cli/cli-harness.js";
import { WORKFLOW, perModelConfig, writeConfig } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-nats-duplicate-"));
let server: NatsServer | null = null;
const procs: CliRun[] = [];
afterAll(async () => {
  for (const p of procs) p.child.kill("SIGKILL");
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("a second worker for a served model and rank", () => {
  it("is refused, and the run goes on with the first", async () => {
    server = await startNatsServer();
    const env = { MASO_NATS_TOKEN: server.token, MASO_THREADS: "1", MASO_RUN_KEY: newRunKey() };
    const runtime = { transport: "nats", nats: { url: server.url, workers: "attach", run: "dup", startupTimeoutMs: 30_000 } };
    const config = writeConfig(root, "c.json", perModelConfig({ runtime, schedule: { steps: 100_000, tasksPerStep: 2, concurrency: 8 } }));
    const worker = (model: string) => {
      const w = startCli(["worker", "--nats", server!.url, "--run", "dup", "--model", model, "--threads", "1"], env);
      procs.push(w);
      return w;
    };
    const planner = worker("planner");
    const solver = worker("solver");
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", join(root, "run")], env);
    procs.push(controller);
    await planner.waitFor((out) => out.includes("serving"));
    await solver.waitFor((out) => out.includes("serving"));
    const second = worker("solver");
    const t0 = Date.now();
    const refused = await second.done;
    expect(refused.code).toBe(1);
    expect(second.stderr()).toMatch(/WORKER_DUPLICATE: worker solver\/0 is already served by pid \d+ on /);
    expect(Date.now() - t0).toBeLessThan(20_000);
    // the run still trains on the first solver: later steps come
    const steps = () => [...controller.stdout().matchAll(/step (\d+)\//g)].map((m) => Number(m[1]));
    const at = Math.max(0, ...steps());
    await controller.waitFor((out) => [...out.matchAll(/step (\d+)\//g)].some((m) => Number(m[1]) >= at + 3));
    expect(controller.child.exitCode).toBeNull();
    expect(solver.stdout()).not.toContain("stopped");
  });

  it("of two started at once, one is refused before it builds, and the run goes on with the other", async () => {
    const env = { MASO_NATS_TOKEN: server!.token, MASO_THREADS: "1", MASO_RUN_KEY: newRunKey() };
    const runtime = { transport: "nats", nats: { url: server!.url, workers: "attach", run: "dup2", startupTimeoutMs: 30_000 } };
    const config = writeConfig(root, "c2.json", perModelConfig({ runtime, schedule: { steps: 100_000, tasksPerStep: 2, concurrency: 8 } }));
    const workers: CliRun[] = [];
    for (const model of ["planner", "solver", "solver"]) {
      const w = startCli(["worker", "--nats", server!.url, "--run", "dup2", "--model", model, "--threads", "1"], env);
      procs.push(w);
      workers.push(w);
      await w.waitFor((out) => out.includes("waiting for the run config"));
    }
    // both solvers see the config at the same moment and claim solver/0 together
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", join(root, "run2")], env);
    procs.push(controller);
    const solvers = workers.slice(1);
    const refused = await Promise.race(solvers.map((w) => w.done.then(() => w)));
    expect(refused.child.exitCode).toBe(1);
    expect(refused.stderr()).toMatch(/WORKER_DUPLICATE: worker solver\/0 is already served by pid \d+ on /);
    expect(refused.stdout()).not.toContain("serving");
    const served = solvers.find((w) => w !== refused)!;
    // the run trains on the winner, checkpoints included (every 5 steps), with no duplicate writing beside it
    await controller.waitFor((out) => [...out.matchAll(/step (\d+)\//g)].some((m) => Number(m[1]) >= 7));
    expect(controller.child.exitCode).toBeNull();
    expect(served.child.exitCode).toBeNull();
    expect(served.stdout()).toContain("serving");
  });
});
