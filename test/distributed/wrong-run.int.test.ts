// A worker started with another run id than its controller's: both sides say so within seconds,
// and the controller's WORKER_MISSING names the stray worker.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { type CliRun, startCli } from "../cli/cli-harness.js";
import { WORKFLOW, perModelConfig, writeConfig } from "./per-model.js";
import { newRunKey } from "../../src/distributed/run-key.js";

const root = mkdtempSync(join(tmpdir(), "maso-nats-wrong-run-"));
let server: NatsServer | null = null;
const procs: CliRun[] = [];
afterAll(async () => {
  for (const p of procs) p.child.kill("SIGKILL");
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("a worker of another run", () => {
  it("is reported by the controller and reports itself within seconds", async () => {
    server = await startNatsServer();
    const env = { MASO_NATS_TOKEN: server.token, MASO_THREADS: "1", MASO_RUN_KEY: newRunKey() };
    const runtime = { transport: "nats", nats: { url: server.url, workers: "attach", run: "right", startupTimeoutMs: 8000 } };
    const config = writeConfig(root, "c.json", perModelConfig({ runtime }));
    const worker = startCli(["worker", "--nats", server.url, "--run", "wrong", "--model", "planner", "--threads", "1"], env);
    procs.push(worker);
    await worker.waitFor((out) => out.includes("waiting for the run config"));
    const t0 = Date.now();
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", join(root, "run")], env);
    procs.push(controller);
    await controller.waitFor((out) => out.includes(`worker planner/0 of run "wrong" is waiting on this server, not one of run "right"`));
    const controllerMs = Date.now() - t0;
    await worker.waitFor((out) => out.includes(`no controller has published run "wrong" on this server, but run "right" did`));
    const workerMs = Date.now() - t0;
    console.log(`controller said it after ${controllerMs} ms, the worker after ${workerMs} ms`);
    expect(controllerMs).toBeLessThan(8000);
    expect(workerMs).toBeLessThan(8000);
    expect((await controller.done).code).toBe(1);
    expect(controller.stderr()).toMatch(
      /WORKER_MISSING: .*planner\/0.*; worker planner\/0 of run "wrong" waits on this server instead.*--run right/,
    );
  });

  it("a controller for attached workers without the run key is refused before it writes the run directory", async () => {
    const runtime = { transport: "nats", nats: { url: "nats://127.0.0.1:1", workers: "attach", run: "keyless" } };
    const config = writeConfig(root, "keyless.json", perModelConfig({ runtime }));
    const runDir = join(root, "keyless-run");
    const r = startCli(["train", WORKFLOW, "--config", config, "--run-dir", runDir], { MASO_RUN_KEY: "", MASO_THREADS: "1" });
    procs.push(r);
    expect((await r.done).code).toBe(2);
    expect(r.stderr()).toContain("CONFIG_RUN_KEY");
    expect(existsSync(runDir)).toBe(false);
  });
});
