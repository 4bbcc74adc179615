// A spawned worker process that dies is noticed from its exit, before any heartbeat timeout: the
// next call to it fails with WORKER_LOST naming the worker, its pid, the signal and the operation.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runtimeOptionsOf } from "../../src/cli/commands/worker.js";
import { createNatsRuntime } from "../../src/distributed/nats-runtime.js";
import type { NatsTransport } from "../../src/distributed/nats-transport.js";
import { WORKFLOW, perModelConfig } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-spawn-exit-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a spawned worker that exits", () => {
  it("fails the next call at once with WORKER_LOST, and the embedded server and other workers are cleaned up", async () => {
    const raw = { ...perModelConfig({ runDir: join(root, "run") }), workflow: resolve(WORKFLOW) };
    const { config, opts } = await runtimeOptionsOf(raw, "test");
    const settings = { ...config.runtime.nats, threads: 1, heartbeatTimeoutMs: 60_000 };
    const rt = await createNatsRuntime({ ...opts, startStep: 0 }, { settings, runDir: config.runDir, config: raw, startStep: 0 });
    const transport = rt.transport as NatsTransport;
    const { pid } = await transport.host({ model: "solver", rank: 0 }, "hello", {});
    const planner = await transport.host({ model: "planner", rank: 0 }, "hello", {});
    process.kill(pid, "SIGKILL");
    const t0 = Date.now();
    let err: unknown = null;
    while (!err && Date.now() - t0 < 10_000)
      err = await transport.call("solver", "state", {}).then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({
      code: "WORKER_LOST",
      message: expect.stringMatching(new RegExp(`worker solver/0 \\(pid ${pid}\\) was killed by SIGKILL, (during|before) .*state`)),
    });
    expect(Date.now() - t0).toBeLessThan(5000); // far inside the 60 s heartbeat timeout
    await rt.close?.({ finished: false });
    expect(() => process.kill(planner.pid, 0)).toThrow(); // spawned workers end with the run
  });
});
