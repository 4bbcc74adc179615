// A worker process SIGKILLed in the middle of a run over NATS (workers attached, as on several
// machines): the controller fails within the heartbeat timeout with an error naming the worker
// and the operation it was waiting on; with the worker restarted, `maso train --resume` ends with
// exactly the metrics and trajectories of an uninterrupted run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { type CliRun, runCli, startCli } from "../cli/cli-harness.js";
import { exactMetrics, runTrajectories } from "../cli/run-files.js";
import { WORKFLOW, perModelConfig, writeConfig } from "./per-model.js";
import { newRunKey } from "../../src/distributed/run-key.js";

const STEPS = 10;
const HEARTBEAT_TIMEOUT_MS = 1500;
const root = mkdtempSync(join(tmpdir(), "maso-nats-fault-"));
let server: NatsServer | null = null;
const workers: CliRun[] = [];
afterAll(async () => {
  for (const w of workers) w.child.kill("SIGKILL");
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("a worker killed mid-run", () => {
  it("fails the step within the heartbeat timeout, naming it; --resume then matches the uninterrupted run", async () => {
    server = await startNatsServer();
    const env = { MASO_NATS_TOKEN: server.token, MASO_THREADS: "1", MASO_RUN_KEY: newRunKey() };
    const base = {
      schedule: { steps: STEPS, tasksPerStep: 2, concurrency: 8 },
      checkpoint: { every: 2, keep: 2 },
      eval: { every: 0, episodes: 4 },
    };
    const plain = writeConfig(root, "plain.json", perModelConfig(base));
    const attach = writeConfig(
      root,
      "attach.json",
      perModelConfig({
        ...base,
        runtime: {
          transport: "nats",
          nats: { url: server.url, workers: "attach", run: "fault", heartbeatMs: 200, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
        },
      }),
    );
    const ref = join(root, "ref");
    expect((await runCli(["train", WORKFLOW, "--config", plain, "--run-dir", ref], { MASO_THREADS: "1" })).code).toBe(0);

    const worker = (model: string) => {
      const w = startCli(["worker", "--nats", server!.url, "--run", "fault", "--model", model, "--threads", "1"], env);
      workers.push(w);
      return w;
    };
    const planner = worker("planner");
    let solver = worker("solver");
    const run = join(root, "run");
    const controller = startCli(["train", WORKFLOW, "--config", attach, "--run-dir", run], env);
    await controller.waitFor((out) => /^step 3\/10 /m.test(out));
    solver.child.kill("SIGKILL");
    const killedAt = Date.now();
    const { code } = await controller.done;
    const noticedMs = Date.now() - killedAt;
    expect(code).not.toBe(0);
    expect(controller.stderr()).toMatch(
      // whichever comes first: its heartbeat goes stale, or a call finds its subjects unsubscribed
      /WORKER_LOST: worker solver\/0 (sent no heartbeat for \d+ ms \(timeout 1500 ms\)|stopped listening on its subjects), (during|before) (solver\/0 )?\w+/,
    );
    expect(noticedMs).toBeLessThan(HEARTBEAT_TIMEOUT_MS + 2500);

    solver = worker("solver");
    const resumed = await runCli(["train", "--resume", run], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/resumed from step \d+/);
    expect(exactMetrics(run)).toEqual(exactMetrics(ref));
    expect(runTrajectories(run)).toEqual(runTrajectories(ref));
    // the finished run shut its workers down
    expect((await planner.done).code).toBe(0);
    expect((await solver.done).code).toBe(0);
  });
});
