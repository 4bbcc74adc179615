// A client holding only the NATS server's token, against a run sealed with its run key: it reads
// no prompt, its forged replies, errors and requests (and a replayed authentic request) change
// nothing, it gets no weights, and its rewritten config makes no worker import a module. A worker
// without MASO_RUN_KEY refuses to start; an authenticated config naming another module than the
// pinned workflow is refused too.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Kvm } from "@nats-io/kv";
import { connect, createInbox, headers, type Msg, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, describe, expect, it } from "vitest";
import { runtimeOptionsOf } from "../../src/cli/commands/worker.js";
import { startNatsServer } from "../../src/distributed/nats-server.js";
import { createNatsRuntime } from "../../src/distributed/nats-runtime.js";
import type { NatsTransport } from "../../src/distributed/nats-transport.js";
import { fileSha256, newRunKey, parseRunKey, runSealer, sealKv, senderId } from "../../src/distributed/run-key.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import type { StepItem } from "../../src/runtime/controller/step-context.js";
import { type CliRun, startCli } from "../cli/cli-harness.js";
import { comparable, perModelConfig, WORKFLOW } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-security-"));
const procs: CliRun[] = [];
afterAll(() => {
  for (const p of procs) p.child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

const RUN = "sec";
const utf8 = new TextEncoder();
const text = (b: Uint8Array) => Buffer.from(b).toString("latin1");

/** The attacker's own request inboxes, which its forger leaves alone. */
const own = new Set<string>();

/** The attacker: on every request it sees, a forged reply (ok or error, alternately) races the worker's. */
function forgeReplies(nc: NatsConnection, seen: Msg[]) {
  let n = 0;
  return nc.subscribe(`maso.${RUN}.>`, {
    callback: (_e, msg) => {
      seen.push(msg);
      if (!msg.reply || own.has(msg.reply)) return;
      const h = headers();
      h.set("Maso-Chunk", "0/1");
      const error = n++ % 2 === 1;
      h.set("Maso-Status", error ? "error" : "ok");
      const body = error
        ? { code: "FORGED_STOP", message: "forged", hint: "" }
        : { text: "FORGED", sampleHandle: { id: 0 }, tokens: 1, version: 0, id: 0 };
      nc.publish(msg.reply, utf8.encode(JSON.stringify(body)), { headers: h });
    },
  });
}

/** A request from the attacker; resolves with whatever answers within `ms`, or null. */
async function ask(nc: NatsConnection, subject: string, body: Uint8Array, h = headers(), ms = 1500): Promise<Uint8Array | null> {
  const inbox = createInbox();
  own.add(inbox);
  const sub = nc.subscribe(inbox, { max: 1 });
  h.set("Maso-Run", RUN);
  nc.publish(subject, body, { headers: h, reply: inbox });
  const got = await Promise.race([
    (async () => {
      for await (const m of sub) return m.data;
      return null;
    })(),
    new Promise<null>((r) => setTimeout(() => r(null), ms)),
  ]);
  sub.unsubscribe();
  return got;
}

describe("a client with only the server token", () => {
  it("cannot read prompts, forge replies, errors, requests or weights, or make a worker import a module", async () => {
    process.env.MASO_THREADS = "1";
    const server = await startNatsServer();
    const raw = { ...perModelConfig({ runDir: join(root, "run") }), workflow: resolve(WORKFLOW) };
    const { config, mod, opts } = await runtimeOptionsOf(raw, "test");
    const attacker = await connect({ servers: server.url, token: server.token });
    const seen: Msg[] = [];
    const kvSeen: Uint8Array[] = [];
    const forger = forgeReplies(attacker, seen);
    const kvSub = attacker.subscribe(`$KV.maso-${RUN}.>`, { callback: (_e, m) => void kvSeen.push(m.data) });
    const log: string[] = [];
    const rt = await createNatsRuntime(
      { ...opts, startStep: 0 },
      {
        settings: { ...config.runtime.nats, url: server.url, run: RUN, replicas: { solver: 2 }, threads: 1, callTimeoutMs: 20_000 },
        runDir: config.runDir,
        config: raw,
        startStep: 0,
        auth: { token: server.token },
        log: (l) => log.push(l),
      },
    );
    const ref = await createRuntime({ ...opts, startStep: 0 });
    const secrets: string[] = ["hint for "];
    try {
      for (let step = 1; step <= 2; step++) {
        const items: StepItem<object, unknown>[] = mod.tasks.train.slice(step * 2, step * 2 + 2).flatMap((task, k) =>
          Array.from({ length: 2 }, (_, g) => ({
            episode: { id: `secret-episode-${step}-${k}-${g}`, state: mod.initialState(task), taskId: `t${k}` },
            task,
          })),
        );
        secrets.push(`secret-episode-${step}-`);
        const [got, want] = [await rt.controller.step(items), await ref.controller.step(items)];
        // (b) forged ok and error replies raced every authentic one: the run is the unattacked run
        expect(comparable(got.trajectories)).toEqual(comparable(want.trajectories));
        expect(got.roles).toEqual(want.roles);
        // (b) forged requests: an update, a shutdown, and an authentic request replayed verbatim
        const captured = seen.find((m) => m.subject.endsWith(".state"))!;
        const replayHeaders = headers();
        for (const [k, v] of captured.headers!) replayHeaders.set(k, v[0]);
        expect(await ask(attacker, captured.subject, captured.data, replayHeaders)).toBeNull();
        expect(await ask(attacker, `maso.${RUN}.planner.0.update`, utf8.encode("{}"))).toBeNull();
        expect(await ask(attacker, `maso.${RUN}.solver.1.shutdown`, utf8.encode("{}"))).toBeNull();
        // (c) rank 0's weights: no answer at all
        expect(await ask(attacker, `maso.${RUN}.solver.0.weights`, utf8.encode(JSON.stringify({ version: step })))).toBeNull();
      }
      const transport = rt.transport as NatsTransport;
      const hellos = await Promise.all([0, 1].map((rank) => transport.host({ model: "solver", rank }, "hello", {})));
      expect(hellos.map((h) => h.version)).toEqual([2, 2]); // the replica synced, and still serves
    } finally {
      await rt.close?.();
    }
    forger.unsubscribe();
    kvSub.unsubscribe();
    // (a) the attacker saw the calls, but no prompt, episode id or config in any of them
    expect(seen.length).toBeGreaterThan(30);
    expect(kvSeen.length).toBeGreaterThan(3);
    const everything = [...seen.map((m) => text(m.data)), ...kvSeen.map(text)].join("\n");
    for (const s of [...secrets, "two-role-demo", "workflow.ts", config.runDir]) expect(everything).not.toContain(s);
    // the controller and the workers said, once each, that they dropped what they could not open
    expect(log.some((l) => l.includes("is not sealed with this run's key"))).toBe(true);
    const workerLogs = readdirSync(join(config.runDir, "workers")).map((f) => readFileSync(join(config.runDir, "workers", f), "utf8"));
    expect(workerLogs.some((l) => l.includes("is not sealed with this run's key"))).toBe(true);

    // (d) a config rewritten by the attacker: the worker never builds from it, so never imports the module
    const marker = join(root, "imported");
    const evil = join(root, "evil.mjs");
    writeFileSync(
      evil,
      `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "x"); export const workflow = {};`,
    );
    const kv = await new Kvm(attacker).open(`maso-${RUN}`);
    const forged = {
      config: { ...raw, workflow: evil },
      runDir: root,
      session: "evil",
      settings: { heartbeatMs: 200, callTimeoutMs: 5000 },
      workflowSha256: fileSha256(evil),
    };
    await kv.put("config", JSON.stringify(forged));
    const runKey = newRunKey();
    const env = { MASO_NATS_TOKEN: server.token, MASO_THREADS: "1", MASO_RUN_KEY: runKey };
    const worker = startCli(["worker", "--nats", server.url, "--run", RUN, "--model", "planner", "--threads", "1"], env);
    procs.push(worker);
    await worker.waitFor((out) => out.includes("is not sealed with this run's key"));
    await new Promise((r) => setTimeout(r, 1000));
    expect(existsSync(marker)).toBe(false);
    // a config sealed with the run key but naming another module than the one whose hash it pins
    const sealer = runSealer(parseRunKey(runKey, "CONFIG_RUN_KEY"), senderId("controller"));
    await kv.put(
      "config",
      sealKv(sealer, `maso-${RUN}`, "config", { ...forged, session: "s2", workflowSha256: fileSha256(resolve(WORKFLOW)) }),
    );
    const ended = await worker.done;
    expect(ended.code).not.toBe(0);
    expect(worker.stderr() + worker.stdout()).toContain("WORKER_MODULE_HASH");
    expect(existsSync(marker)).toBe(false);
    // no run key: the worker refuses to start, naming the variable
    const keyless = startCli(["worker", "--nats", server.url, "--run", RUN, "--model", "planner"], { ...env, MASO_RUN_KEY: "" });
    procs.push(keyless);
    expect((await keyless.done).code).not.toBe(0);
    expect(keyless.stderr()).toMatch(/WORKER_RUN_KEY.*MASO_RUN_KEY/);
    await attacker.close();
    await server.stop();
  }, 90_000);
});
