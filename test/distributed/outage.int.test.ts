// A NATS server that goes away under a run: a 2 s outage mid-step stops the controller at once
// with NATS_DISCONNECTED (not at callTimeoutMs, not as a lost worker) and `--resume` then finishes;
// a server gone for good makes attached workers exit non-zero once their reconnect window ends;
// an embedded server dies with its SIGKILLed controller and leaves no token file behind. In hold
// mode the same outage is waited out and the run finishes exactly as an uninterrupted one; an
// outage longer than the hold fails as fail-fast does.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { type CliRun, runCli, startCli } from "../cli/cli-harness.js";
import { exactMetrics } from "../cli/run-files.js";
import { WORKFLOW, checkpointHashes, perModelConfig, writeConfig } from "./per-model.js";
import { newRunKey } from "../../src/distributed/run-key.js";

const root = mkdtempSync(join(tmpdir(), "maso-nats-outage-"));
const servers: NatsServer[] = [];
const procs: CliRun[] = [];
afterAll(async () => {
  for (const p of procs) p.child.kill("SIGKILL");
  for (const s of servers) await s.stop();
  rmSync(root, { recursive: true, force: true });
});

const base = (steps: number) => ({
  schedule: { steps, tasksPerStep: 2, concurrency: 8 },
  checkpoint: { every: 1, keep: 2 },
  eval: { every: 0, episodes: 4 },
});

/** A server, an attached run's config on it, and a starter for its workers. */
async function attachedRun(name: string, steps: number, workerFlags: string[] = [], nats: Record<string, unknown> = {}) {
  const server = await startNatsServer();
  servers.push(server);
  const env = { MASO_NATS_TOKEN: server.token, MASO_THREADS: "1", MASO_RUN_KEY: newRunKey() };
  const runtime = {
    transport: "nats",
    nats: { url: server.url, workers: "attach", run: name, heartbeatMs: 200, heartbeatTimeoutMs: 1500, ...nats },
  };
  const config = writeConfig(root, `${name}.json`, perModelConfig({ ...base(steps), runtime }));
  const worker = (model: string) => {
    const w = startCli(["worker", "--nats", server.url, "--run", name, "--model", model, "--threads", "1", ...workerFlags], env);
    procs.push(w);
    return w;
  };
  return { server, env, config, worker, runDir: join(root, name) };
}

const cmdline = (pid: number): string[] => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
};
const parentOf = (pid: number): number => {
  try {
    return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
};
const alive = (pid: number) => cmdline(pid).length > 1;

/** The nats-server processes started (through their wrapper) by process `pid`. */
function natsServersOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => /nats-server$/.test(cmdline(p)[0] ?? "") && parentOf(parentOf(p)) === pid);
}

describe("the NATS server goes away", () => {
  it("a 2 s outage mid-step stops the run at once with NATS_DISCONNECTED; --resume then finishes", async () => {
    const STEPS = 5;
    const { server, env, config, worker, runDir } = await attachedRun("blip", STEPS);
    const ref = join(root, "ref");
    const plain = writeConfig(root, "plain.json", perModelConfig(base(STEPS)));
    expect((await runCli(["train", WORKFLOW, "--config", plain, "--run-dir", ref], { MASO_THREADS: "1" })).code).toBe(0);
    worker("planner");
    worker("solver");
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", runDir], env);
    procs.push(controller);
    await controller.waitFor((out) => /^step 2\/5 /m.test(out));
    const t0 = Date.now();
    await server.stop({ keepStore: true });
    const stopped = controller.done.then((r) => ({ ...r, ms: Date.now() - t0 }));
    await new Promise((r) => setTimeout(r, 2000));
    const back = await startNatsServer({ port: server.port, token: server.token, storeDir: server.storeDir });
    servers.push(back);
    const { code, ms } = await stopped;
    console.log(`controller stopped ${ms} ms after the server`);
    expect(code).toBe(1);
    expect(controller.stderr()).toMatch(
      /NATS_DISCONNECTED: .*the connection to the NATS server at nats:\/\/127\.0\.0\.1:\d+ was lost.*--resume/,
    );
    expect(controller.stderr()).not.toMatch(/WORKER_LOST|WORKER_TIMEOUT/);
    expect(ms).toBeLessThan(2000 + 1500);
    // the workers rode out the outage inside their reconnect window and serve the resumed run
    const resumed = await runCli(["train", "--resume", runDir], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(exactMetrics(runDir)).toEqual(exactMetrics(ref));
  });

  it("a server gone for good: the run stops with NATS_DISCONNECTED and workers exit non-zero after their reconnect window", async () => {
    const { server, env, config, worker, runDir } = await attachedRun("gone", 50, ["--reconnect-window", "1"]);
    const workers = [worker("planner"), worker("solver")];
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", runDir], env);
    procs.push(controller);
    await controller.waitFor((out) => /^step 1\/50 /m.test(out));
    const t0 = Date.now();
    await server.stop();
    expect((await controller.done).code).toBe(1);
    expect(controller.stderr()).toMatch(/NATS_DISCONNECTED/);
    expect(controller.stderr()).not.toMatch(/WORKER_LOST/);
    for (const w of workers) {
      const { code } = await w.done;
      expect(code).toBe(1);
      expect(w.stderr()).toMatch(
        /NATS_DISCONNECTED: worker \w+\/0: the connection to the NATS server at nats:\/\/127\.0\.0\.1:\d+ was lost and did not come back within 1 s; exiting/,
      );
    }
    const ms = Date.now() - t0;
    console.log(`workers exited ${ms} ms after the server`);
    expect(ms).toBeLessThan(1000 + 4000);
  });

  it("an embedded server dies with its SIGKILLed controller and leaves no token file", async () => {
    const config = writeConfig(
      root,
      "embedded.json",
      perModelConfig({ ...base(50), runtime: { transport: "nats", nats: { threads: 1 } } }),
    );
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", join(root, "embedded")], { MASO_THREADS: "1" });
    procs.push(controller);
    await controller.waitFor((out) => /^step 1\/50 /m.test(out));
    const [server] = natsServersOf(controller.child.pid!);
    expect(server).toBeGreaterThan(0);
    const dir = cmdline(server)[2].replace(/\/server\.conf$/, "");
    expect(existsSync(join(dir, "js"))).toBe(true);
    // the server read its config at start; the token is no longer on disk
    expect(existsSync(join(dir, "server.conf"))).toBe(false);
    controller.child.kill("SIGKILL");
    await controller.done;
    const t0 = Date.now();
    while ((alive(server) || existsSync(dir)) && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
    expect(alive(server)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    console.log(`embedded server gone ${Date.now() - t0} ms after its controller`);
  });
});

/** The sha256 of every checkpoint file of a run, by checkpoint directory (manifests aside). */
async function checkpointFiles(runDir: string): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const c of await listCheckpoints(runDir)) out[c.dir.split("/").at(-1)!] = await checkpointHashes(c.dir);
  return out;
}

describe("hold mode: runtime.nats.outage hold", () => {
  it("a 2 s outage mid-step is waited out: the run finishes with an uninterrupted run's metrics and checkpoints", async () => {
    const STEPS = 3;
    const { server, env, config, worker, runDir } = await attachedRun("hold", STEPS, [], { outage: "hold", holdMs: 10_000 });
    const ref = join(root, "hold-ref");
    const plain = writeConfig(root, "hold-plain.json", perModelConfig(base(STEPS)));
    expect((await runCli(["train", WORKFLOW, "--config", plain, "--run-dir", ref], { MASO_THREADS: "1" })).code).toBe(0);
    worker("planner");
    worker("solver");
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", runDir], env);
    procs.push(controller);
    await controller.waitFor((out) => /^step 1\/3 /m.test(out));
    await server.stop({ keepStore: true });
    await new Promise((r) => setTimeout(r, 2000));
    servers.push(await startNatsServer({ port: server.port, token: server.token, storeDir: server.storeDir }));
    const { code } = await controller.done;
    expect(code, controller.stderr()).toBe(0);
    expect(controller.stderr()).not.toMatch(/NATS_DISCONNECTED|WORKER_LOST|WORKER_TIMEOUT/);
    expect(exactMetrics(runDir)).toEqual(exactMetrics(ref));
    const files = await checkpointFiles(runDir);
    expect(Object.keys(files).length).toBe(2);
    expect(files).toEqual(await checkpointFiles(ref));
  });

  it("an outage longer than holdMs fails every call with NATS_DISCONNECTED once the hold runs out", async () => {
    const HOLD = 2000;
    const { server, env, config, worker, runDir } = await attachedRun("hold-out", 50, [], { outage: "hold", holdMs: HOLD });
    worker("planner");
    worker("solver");
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", runDir], env);
    procs.push(controller);
    await controller.waitFor((out) => /^step 1\/50 /m.test(out));
    const t0 = Date.now();
    await server.stop();
    const { code } = await controller.done;
    const ms = Date.now() - t0;
    console.log(`hold mode: controller stopped ${ms} ms after the server (hold ${HOLD} ms)`);
    expect(code).toBe(1);
    expect(controller.stderr()).toMatch(/NATS_DISCONNECTED: .*the connection to the NATS server at nats:\/\/127\.0\.0\.1:\d+ was lost/);
    expect(controller.stderr()).not.toMatch(/WORKER_LOST|WORKER_TIMEOUT/);
    expect(ms).toBeGreaterThanOrEqual(HOLD);
    expect(ms).toBeLessThan(HOLD + 2500);
  });

  it("an attached worker whose reconnect window is shorter than the hold refuses the run", async () => {
    const nats = { outage: "hold", holdMs: 5000, startupTimeoutMs: 5000 };
    const { env, config, worker, runDir } = await attachedRun("hold-window", 1, ["--reconnect-window", "2"], nats);
    const w = worker("planner");
    const controller = startCli(["train", WORKFLOW, "--config", config, "--run-dir", runDir], env);
    procs.push(controller);
    expect((await w.done).code).toBe(1);
    expect(w.stderr()).toMatch(
      /WORKER_RECONNECT_WINDOW: worker planner\/0: run hold-window holds its calls through a NATS server outage for up to 5000 ms, longer than this worker's reconnect window \(2 s\).*--reconnect-window 5/,
    );
    expect((await controller.done).code).toBe(1);
    expect(controller.stderr()).toMatch(/WORKER_MISSING/);
  });

  it("refuses generation replicas and data-parallel ranks (their worker-to-worker calls are not re-sent)", async () => {
    const runtime = { transport: "nats", nats: { url: "nats://127.0.0.1:1", outage: "hold", replicas: { solver: 2 } } };
    const config = writeConfig(root, "hold-replicas.json", perModelConfig({ ...base(1), runtime }));
    const r = await runCli(["train", WORKFLOW, "--config", config, "--run-dir", join(root, "hold-replicas")], { MASO_THREADS: "1" });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /CONFIG_NATS_OUTAGE: runtime\.nats\.outage "hold" does not cover generation replicas or data-parallel ranks \(solver: 2 replicas\)/,
    );
    const held = { transport: "nats", nats: { url: "nats://127.0.0.1:1", outage: "hold" } };
    const ranked = writeConfig(root, "hold-ranks.json", perModelConfig({ ...base(1), runtime: held }));
    const dp = await runCli(["train", WORKFLOW, "--config", ranked, "--run-dir", join(root, "hold-ranks"), "--ranks", "2"], {
      MASO_THREADS: "1",
    });
    expect(dp.code, dp.stderr).toBe(2);
    expect(dp.stderr).toMatch(/does not cover generation replicas or data-parallel ranks \(planner: 2 ranks, solver: 2 ranks\)/);
  });
});
