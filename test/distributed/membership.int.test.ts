// Claims on a model and rank, against a real nats-server: of two workers that claim at once exactly
// one wins; a dead worker's entry is taken over; the controller waits for `serving` and catches two
// processes beating for one address.
import type { KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../src/distributed/connect.js";
import { type ClaimOptions, claimAddress, type MemberEntry, openRunBucket, watchMembers } from "../../src/distributed/membership.js";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { newRunKey, openKv, parseRunKey, runSealer, sealKv, senderId } from "../../src/distributed/run-key.js";
import { memberKey, runBucket } from "../../src/distributed/subjects.js";
import { MasoError } from "../../src/errors.js";

const runKey = parseRunKey(newRunKey(), "WORKER_RUN_KEY");
const address = { model: "solver", rank: 0 };
const key = memberKey(address);
let server: NatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, { token: server.token }, "membership test", 1);
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

const entryOf = (pid: number, serving = false): MemberEntry => ({
  ...address,
  pid,
  host: "h",
  threads: 1,
  version: 0,
  session: "s1",
  serving,
});

function claimOf(run: string, pid: number): ClaimOptions {
  const sealer = runSealer(runKey, senderId("reader"));
  return {
    key,
    label: "solver/0",
    read: (v) => openKv<MemberEntry>(sealer, runBucket(run), key, v),
    heartbeat: { url: server.url, auth: { token: server.token }, run, runKey, intervalMs: 200, reconnectSeconds: 1, entry: entryOf(pid) },
  };
}

async function latestPid(kv: KV, run: string): Promise<number | undefined> {
  const e = await kv.get(key);
  return e?.operation === "PUT" ? openKv<MemberEntry>(runSealer(runKey, senderId("reader")), runBucket(run), key, e.value)?.pid : undefined;
}

describe("a worker's claim on its model and rank", () => {
  it("of two claims made at once, exactly one wins; the other is WORKER_DUPLICATE naming the winner", async () => {
    const kv = await openRunBucket(nc, "m1");
    const results = await Promise.allSettled([claimAddress(kv, claimOf("m1", 101)), claimAddress(kv, claimOf("m1", 102))]);
    const won = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const reason = (refused[0] as PromiseRejectedResult).reason as MasoError;
    expect(reason).toBeInstanceOf(MasoError);
    expect(reason.code).toBe("WORKER_DUPLICATE");
    const winner = await latestPid(kv, "m1");
    expect(reason.message).toContain(`already served by pid ${winner} on h`);
    await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof claimAddress>>>).value.stop();
    expect(await latestPid(kv, "m1")).toBeUndefined();
  });

  it("takes over an entry that stays still for 2.5 heartbeat intervals (a dead worker's)", async () => {
    const kv = await openRunBucket(nc, "m2");
    await kv.put(key, sealKv(runSealer(runKey, senderId("dead")), runBucket("m2"), key, entryOf(200, true)));
    const t0 = Date.now();
    const heartbeat = await claimAddress(kv, claimOf("m2", 201));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(500);
    expect(await latestPid(kv, "m2")).toBe(201);
    await heartbeat.stop();
  });

  it("the controller waits for serving: true, and counts two processes beating for one address as lost", async () => {
    const kv = await openRunBucket(nc, "m3");
    const watch = await watchMembers(kv, runBucket("m3"), runSealer(runKey, senderId("controller")), 5_000);
    const lost: string[] = [];
    watch.onLost((label, why) => lost.push(`${label} ${why}`));
    const heartbeat = await claimAddress(kv, claimOf("m3", 301));
    // building: beats, but not called yet
    await expect(watch.waitFor([address], "s1", 700)).rejects.toThrow(/WORKER_MISSING|no heartbeat from worker solver\/0/);
    heartbeat.update({ serving: true });
    await watch.waitFor([address], "s1", 2_000);
    expect(lost).toEqual([]);
    // a second process beats for the same address between the first one's beats
    const other = runSealer(runKey, senderId("other"));
    await kv.put(key, sealKv(other, runBucket("m3"), key, entryOf(302, true)));
    const t0 = Date.now();
    while (lost.length === 0 && Date.now() - t0 < 3_000) await new Promise((r) => setTimeout(r, 50));
    expect(lost).toEqual([
      "solver/0 is served by two worker processes (pid 301 on h and pid 302 on h), which both answer every call: stop one (WORKER_DUPLICATE)",
    ]);
    watch.stop();
    await heartbeat.stop();
  });
});
