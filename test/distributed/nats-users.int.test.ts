// Per-role NATS users against a real nats-server: each role does what a run needs of it (sealed
// calls with chunked replies, a replica's call to rank 0, KV entries, checkpoint parts both ways),
// and the server refuses the rest: a worker publishing the controller's config or into its inbox,
// touching another model's subjects or deleting the run's streams; an observer publishing anything.
// Then whole runs: 2 steps on an embedded server, and attached workers on a server configured with
// `maso nats-config`'s block.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../src/distributed/connect.js";
import { openRunBucket } from "../../src/distributed/membership.js";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { authOf, authorizationBlock, runUsers } from "../../src/distributed/nats-users.js";
import { openPartStore } from "../../src/distributed/part-transfer.js";
import { decodeJson, encodeJson, rpcClient, serveRpc } from "../../src/distributed/rpc.js";
import { newRunKey, parseRunKey, runSealer, senderId } from "../../src/distributed/run-key.js";
import { type NatsRole, opSubject, roleInbox } from "../../src/distributed/subjects.js";
import { type CliRun, runCli, startCli } from "../cli/cli-harness.js";
import { exactMetrics } from "../cli/run-files.js";
import { perModelConfig, WORKFLOW, writeConfig } from "./per-model.js";

const RUN = "perm";
const runKey = parseRunKey(newRunKey(), "CONFIG_RUN_KEY");
const users = runUsers(RUN, ["a", "b"]);
const CONTROLLER: NatsRole = { kind: "controller" };
const WORKER_A: NatsRole = { kind: "worker", model: "a" };
const OBSERVER: NatsRole = { kind: "observer" };
const root = mkdtempSync(join(tmpdir(), "maso-nats-users-"));
let server: NatsServer;
const conns: NatsConnection[] = [];
const children: CliRun[] = [];

beforeAll(async () => {
  server = await startNatsServer({ authorization: authorizationBlock(RUN, users, 60_000) });
});
afterAll(async () => {
  for (const c of children) c.child.kill("SIGKILL");
  for (const nc of conns) await nc.close().catch(() => {});
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A connection as `role`, with the role's inbox; `errors` collects the server's refusals. */
async function as(role: NatsRole): Promise<{ nc: NatsConnection; errors: string[] }> {
  const nc = await connectNats(server.url, authOf(users, RUN, role), `test ${role.kind}`, 1, roleInbox(RUN, role));
  conns.push(nc);
  const errors: string[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === "error") errors.push(s.error.message);
  })();
  return { nc, errors };
}

/** What the server refused of `c` while `act` ran (a round trip later, so every refusal has arrived). */
async function refusals(c: { nc: NatsConnection; errors: string[] }, act: () => void): Promise<string[]> {
  c.errors.length = 0;
  act();
  await c.nc.flush();
  await new Promise((r) => setTimeout(r, 50));
  return [...c.errors];
}

/** The error a subscription of `c` to `subject` ends with (null: it was allowed). */
async function subscribeRefusal(nc: NatsConnection, subject: string): Promise<string | null> {
  const sub = nc.subscribe(subject);
  await nc.flush();
  const ended = await Promise.race([
    sub.closed.then((e) => e?.message ?? "closed"),
    new Promise<null>((r) => setTimeout(() => r(null), 300)),
  ]);
  if (!ended) sub.unsubscribe();
  return ended;
}

describe("per-role NATS users", () => {
  it("let each role do its part of a run: sealed calls with chunked replies, a replica's call to rank 0, KV entries", async () => {
    const ctl = await as(CONTROLLER);
    const a0 = await as(WORKER_A);
    const a1 = await as(WORKER_A);
    const max = ctl.nc.info!.max_payload;
    const srv = serveRpc(
      a0.nc,
      opSubject(RUN, { model: "a", rank: 0 }, "*"),
      RUN,
      runSealer(runKey, senderId("a/0")),
      "a/0",
      async (op, p) => (op === "big" ? new Uint8Array(2 * max + 7).fill(9) : encodeJson({ op, got: decodeJson(p) })),
    );
    const opts = { timeoutMs: 5000, label: "a/0 op", worker: "a/0" };
    const fromCtl = rpcClient(ctl.nc, RUN, runSealer(runKey, senderId("controller")));
    expect(decodeJson(await fromCtl.request(opSubject(RUN, { model: "a", rank: 0 }, "hello"), encodeJson(1), opts))).toEqual({
      op: "hello",
      got: 1,
    });
    // a reply of three chunks: allow_responses has no message count, only a window
    expect((await fromCtl.request(opSubject(RUN, { model: "a", rank: 0 }, "big"), encodeJson(0), opts)).length).toBe(2 * max + 7);
    const fromReplica = rpcClient(a1.nc, RUN, runSealer(runKey, senderId("a/1")));
    expect(decodeJson(await fromReplica.request(opSubject(RUN, { model: "a", rank: 0 }, "sample"), encodeJson(2), opts))).toEqual({
      op: "sample",
      got: 2,
    });
    const ctlKv = await openRunBucket(ctl.nc, RUN);
    const aKv = await openRunBucket(a0.nc, RUN);
    await ctlKv.put("config", "c");
    await aKv.put("workers.a.0", "beat");
    await aKv.put("waiting.a.1", "waiting");
    expect(new TextDecoder().decode((await aKv.get("config"))!.value)).toBe("c");
    expect(new TextDecoder().decode((await ctlKv.get("workers.a.0"))!.value)).toBe("beat");
    const watched: string[] = [];
    const watch = await ctlKv.watch({ key: "workers.>" });
    void (async () => {
      for await (const e of watch) watched.push(e.key);
    })();
    await aKv.put("workers.a.1", "beat");
    await expect.poll(() => watched).toContain("workers.a.1");
    watch.stop();
    expect([...ctl.errors, ...a0.errors, ...a1.errors]).toEqual([]);
    srv.stop();
    fromCtl.close();
    fromReplica.close();
  });

  it("carry checkpoint parts from a worker to the controller and back", async () => {
    const ctl = await as(CONTROLLER);
    const a = await as(WORKER_A);
    const dir = join(root, "part");
    mkdirSync(join(dir, "hf"), { recursive: true });
    writeFileSync(join(dir, "hf", "model.bin"), Buffer.alloc(300_000, 7));
    const ctlStore = await openPartStore(ctl.nc, RUN, runSealer(runKey, senderId("controller")), 1 << 30, true);
    const aStore = await openPartStore(a.nc, RUN, runSealer(runKey, senderId("a/0")), 1 << 30);
    const up = await aStore.upload(dir, "model a, part wg0-a");
    await ctlStore.download(up, join(root, "at-controller"), "model a, part wg0-a");
    await ctlStore.discard(up.id);
    const back = await ctlStore.upload(join(root, "at-controller"), "model a, part wg0-a");
    await aStore.download(back, join(root, "at-worker"), "model a, part wg0-a");
    await aStore.discard(back.id);
    expect([...ctl.errors, ...a.errors]).toEqual([]);
  });

  it("refuse a worker the controller's subjects, another model's, and the streams themselves", async () => {
    const a = await as(WORKER_A);
    const ctlInbox = `${roleInbox(RUN, CONTROLLER)}.x`;
    for (const subject of [
      "$KV.maso-perm.config",
      "$KV.maso-perm.workers.b.0",
      ctlInbox,
      opSubject(RUN, { model: "b", rank: 0 }, "hello"),
      opSubject(RUN, { model: "a", rank: 1 }, "weights"),
    ])
      expect(await refusals(a, () => a.nc.publish(subject, "x"))).toEqual([`Permissions Violation for Publish to "${subject}"`]);
    const kv = await openRunBucket(a.nc, RUN);
    await expect(kv.put("config", "forged")).rejects.toThrow(/Permissions Violation/);
    await expect(kv.delete("workers.b.0")).rejects.toThrow(/Permissions Violation/);
    const jsm = await jetstreamManager(a.nc);
    await expect(jsm.streams.delete("KV_maso-perm")).rejects.toThrow(/Permissions Violation/);
    await expect(jsm.streams.purge("KV_maso-perm")).rejects.toThrow(/Permissions Violation/);
    await expect(openRunBucket(a.nc, "other")).rejects.toThrow(/Permissions Violation/);
    for (const subject of [
      "maso.perm.b.>",
      "maso.perm.b.0.*",
      roleInbox(RUN, CONTROLLER) + ".>",
      "_INBOX.maso.perm.worker.b.>",
      "maso.other.a.>",
    ])
      expect(await subscribeRefusal(a.nc, subject)).toBe(`Permissions Violation for Subscription to "${subject}"`);
    // the refusals above are the server's, not the client's: its own subjects pass
    expect(await subscribeRefusal(a.nc, "maso.perm.a.0.*")).toBeNull();
    expect(await refusals(a, () => a.nc.publish(opSubject(RUN, { model: "a", rank: 0 }, "hello"), "x"))).toEqual([]);
  });

  it("stop a worker started with another model's or another run's credentials at once, with NATS_PERMISSION", async () => {
    const env = { MASO_NATS_USER: users[1].user, MASO_NATS_PASSWORD: users[1].password, MASO_RUN_KEY: newRunKey() };
    expect(users[1].role).toEqual(WORKER_A);
    for (const [run, model] of [
      [RUN, "b"],
      ["other", "a"],
    ]) {
      const r = await runCli(
        ["worker", "--nats", server.url, "--run", run, "--model", model, "--threads", "1", "--reconnect-window", "1"],
        env,
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/NATS_PERMISSION.*the NATS server refuses it to these credentials/);
    }
  });

  it("let an observer watch the heartbeats and publish nothing", async () => {
    const o = await as(OBSERVER);
    const a = await as(WORKER_A);
    const beats: string[] = [];
    o.nc.subscribe("$KV.maso-perm.workers.>", { callback: (_e, m) => void beats.push(m.subject) });
    await o.nc.flush();
    await (await openRunBucket(a.nc, RUN)).put("workers.a.0", "beat");
    await expect.poll(() => beats).toEqual(["$KV.maso-perm.workers.a.0"]);
    for (const subject of [
      "maso.perm.a.0.hello",
      "$KV.maso-perm.workers.a.0",
      "$JS.API.INFO",
      `${roleInbox(RUN, CONTROLLER)}.x`,
      "anything",
    ])
      expect(await refusals(o, () => o.nc.publish(subject, "x"))).toEqual([`Permissions Violation for Publish to "${subject}"`]);
    expect(await subscribeRefusal(o.nc, "maso.perm.>")).toBe('Permissions Violation for Subscription to "maso.perm.>"');
  });
});

const twoSteps = (extra: Record<string, unknown> = {}) =>
  perModelConfig({ schedule: { steps: 2, tasksPerStep: 2, concurrency: 8 }, checkpoint: { every: 2, keep: 1 }, ...extra });

describe("runs with per-role users", () => {
  it("train 2 steps on an embedded server", async () => {
    const cfg = writeConfig(root, "embedded.json", twoSteps({ runtime: { nats: { threads: 1 } } }));
    const dir = join(root, "embedded");
    // a token in the controller's environment must not reach the workers (they get their model's user)
    const r = await runCli(["train", WORKFLOW, "--config", cfg, "--run-dir", dir, "--nats", "embedded"], { MASO_NATS_TOKEN: "stale" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/started 2 worker processes .*\(one NATS user per role\)/);
    expect(exactMetrics(dir).map((m) => m.step)).toEqual([0, 1, 2]);
  });

  it("train 2 steps with attached workers on a server configured by maso nats-config", async () => {
    const run = "att";
    const printed = await runCli(["nats-config", "--run", run, "--models", "planner,solver"]);
    expect(printed.code, printed.stderr).toBe(0);
    const creds = (who: string) => {
      const m = printed.stdout.match(new RegExp(`#\\s+${who}[^:]*: MASO_NATS_USER=(\\S+) MASO_NATS_PASSWORD=(\\S+)`));
      if (!m) throw new Error(`no credentials for ${who} in:\n${printed.stdout}`);
      return { MASO_NATS_USER: m[1], MASO_NATS_PASSWORD: m[2] };
    };
    // the printed text as it is, comments and all, as the server's authorization section
    const own = await startNatsServer({ authorization: printed.stdout });
    try {
      const key = newRunKey();
      const dir = join(root, "attached");
      for (const model of ["planner", "solver"])
        children.push(
          startCli(["worker", "--nats", own.url, "--run", run, "--model", model, "--threads", "1"], {
            ...creds(`maso worker --model ${model}`),
            MASO_RUN_KEY: key,
          }),
        );
      const cfg = writeConfig(root, "attached.json", twoSteps());
      const r = await runCli(
        ["train", WORKFLOW, "--config", cfg, "--run-dir", dir, "--nats", own.url, "--workers", "attach", "--run-id", run],
        {
          ...creds("controller"),
          MASO_RUN_KEY: key,
          MASO_THREADS: "1",
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(exactMetrics(dir).map((m) => m.step)).toEqual([0, 1, 2]);
      for (const c of children.splice(0)) expect((await c.done).code).toBe(0);
    } finally {
      await own.stop();
    }
  });
});
