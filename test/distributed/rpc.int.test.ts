// The NATS wire against a real nats-server: payloads above max_payload both ways, timeouts, errors
// that arrive as the same MasoError, credentials refused, a message for another run refused, and a
// server restart: pending calls and calls made while it is away fail at once, later calls work
// after the reconnect. In hold mode the same restart loses nothing: a call pending through it, and one
// made while the server is away, each run once on the worker and get their replies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../src/distributed/connect.js";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { decodeJson, encodeJson, rpcClient, serveRpc } from "../../src/distributed/rpc.js";
import { MasoError } from "../../src/errors.js";
import { newRunKey, parseRunKey, runSealer, senderId } from "../../src/distributed/run-key.js";

const runKey = parseRunKey(newRunKey(), "CONFIG_RUN_KEY");
/** Each endpoint its own sealer, as each process has. */
const sealer = () => runSealer(runKey, senderId("test"));

let server: NatsServer;
let nc: NatsConnection;
beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, { token: server.token }, "rpc-test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

const opts = (timeoutMs = 5000) => ({ timeoutMs, label: "w/0 op", worker: "w/0" });

describe("rpc over nats-server", () => {
  it("carries payloads several times max_payload in both directions, byte for byte", async () => {
    const max = nc.info!.max_payload;
    const big = new Uint8Array(3 * max + 12345).map((_, i) => (i * 7919) % 251);
    const srv = serveRpc(nc, "maso.r1.big.0.*", "r1", sealer(), "big/0", async (op, payload) => {
      expect(op).toBe("echo");
      const out = new Uint8Array(payload.length + 1);
      out.set(payload);
      out[payload.length] = 42;
      return out;
    });
    const rpc = rpcClient(nc, "r1", sealer());
    const back = await rpc.request("maso.r1.big.0.echo", big, opts());
    expect(back.length).toBe(big.length + 1);
    expect(Buffer.from(back.subarray(0, big.length)).equals(Buffer.from(big))).toBe(true);
    rpc.close();
    srv.stop();
  });

  it("rethrows a worker's MasoError with its code, message and hint; other errors name the worker", async () => {
    const srv = serveRpc(nc, "maso.r1.err.0.*", "r1", sealer(), "worker err/0", async (op) => {
      if (op === "maso") throw new MasoError("SAMPLE_UNKNOWN", "no sample 9", "send handles from this step");
      throw new Error("boom");
    });
    const rpc = rpcClient(nc, "r1", sealer());
    const e = (await rpc.request("maso.r1.err.0.maso", encodeJson({}), opts()).catch((x: unknown) => x)) as MasoError;
    expect(e).toBeInstanceOf(MasoError);
    expect([e.code, e.message, e.hint]).toEqual([
      "SAMPLE_UNKNOWN",
      "no sample 9 (hint: send handles from this step)",
      "send handles from this step",
    ]);
    await expect(rpc.request("maso.r1.err.0.other", encodeJson({}), opts())).rejects.toMatchObject({
      code: "WORKER_ERROR",
      message: expect.stringContaining("worker err/0: boom"),
    });
    rpc.close();
    srv.stop();
  });

  it("times out a call nobody answers, naming it", async () => {
    const srv = serveRpc(nc, "maso.r1.slow.0.*", "r1", sealer(), "slow/0", () => new Promise<Uint8Array>(() => {}));
    const rpc = rpcClient(nc, "r1", sealer());
    const t0 = Date.now();
    await expect(rpc.request("maso.r1.slow.0.update", encodeJson({}), { ...opts(300), label: "slow/0 update" })).rejects.toMatchObject({
      code: "WORKER_TIMEOUT",
      message: expect.stringContaining("slow/0 update: no reply within 300 ms"),
    });
    expect(Date.now() - t0).toBeLessThan(2000);
    rpc.close();
    srv.stop();
  });

  it("refuses a message for another run before it reaches the handler", async () => {
    let reached = false;
    const srv = serveRpc(nc, "maso.r1.w.0.*", "r1", sealer(), "worker w/0", async () => {
      reached = true;
      return encodeJson({});
    });
    const intruder = rpcClient(nc, "r2", sealer());
    await expect(intruder.request("maso.r1.w.0.update", encodeJson({}), opts())).rejects.toMatchObject({ code: "WORKER_WRONG_RUN" });
    expect(reached).toBe(false);
    intruder.close();
    srv.stop();
  });

  it("refuses wrong credentials and no credentials", async () => {
    await expect(connectNats(server.url, { token: "not-the-token" }, "x")).rejects.toMatchObject({ code: "NATS_AUTH" });
    await expect(connectNats(server.url, {}, "x")).rejects.toMatchObject({ code: "NATS_AUTH" });
  });

  it("fails pending calls when the server goes away, and works again after it restarts", async () => {
    const own = await startNatsServer();
    const a = await connectNats(own.url, { token: own.token }, "a");
    const b = await connectNats(own.url, { token: own.token }, "b");
    let hold = true;
    serveRpc(b, "maso.r1.x.0.*", "r1", sealer(), "x/0", async (_op, p) => {
      while (hold) await new Promise((r) => setTimeout(r, 20));
      return p;
    });
    await b.flush(); // the subscription is on the server before a request can find no responder
    const rpc = rpcClient(a, "r1", sealer());
    const pending = rpc.request("maso.r1.x.0.update", encodeJson({ n: 1 }), { ...opts(60_000), label: "x/0 update" });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    const failed = pending.catch((e: unknown) => e);
    await own.stop({ keepStore: true });
    expect(await failed).toMatchObject({
      code: "NATS_DISCONNECTED",
      message: expect.stringContaining(`x/0 update: the connection to the NATS server at nats://127.0.0.1:${own.port} was lost`),
    });
    expect(Date.now() - t0).toBeLessThan(10_000);
    // a call made while the server is away fails at once, not at its timeout
    const t1 = Date.now();
    await expect(rpc.request("maso.r1.x.0.state", encodeJson({}), { ...opts(60_000), label: "x/0 state" })).rejects.toMatchObject({
      code: "NATS_DISCONNECTED",
      message: expect.stringContaining("x/0 state"),
    });
    expect(Date.now() - t1).toBeLessThan(100);
    hold = false;
    const again = await startNatsServer({ port: own.port, token: own.token, storeDir: own.storeDir });
    let reply: unknown = null;
    for (let i = 0; i < 100 && reply === null; i++)
      reply = await rpc
        .request("maso.r1.x.0.state", encodeJson({ n: 2 }), opts(1000))
        .then(decodeJson)
        .catch(() => new Promise((r) => setTimeout(() => r(null), 100)));
    expect(reply).toEqual({ n: 2 });
    rpc.close();
    await a.close();
    await b.close();
    await again.stop();
  });

  it("hold mode: a call pending through a restart and one made during it each run once and get their replies", async () => {
    const own = await startNatsServer();
    const a = await connectNats(own.url, { token: own.token }, "a");
    const b = await connectNats(own.url, { token: own.token }, "b");
    const runs: Record<string, number> = {};
    let busy = true;
    const handler = async (op: string, p: Uint8Array) => {
      runs[op] = (runs[op] ?? 0) + 1;
      while (op === "update" && busy) await new Promise((r) => setTimeout(r, 20));
      return encodeJson({ op, runs: runs[op], echo: decodeJson(p) });
    };
    serveRpc(b, "maso.r1.x.0.*", "r1", sealer(), "x/0", handler, 60_000);
    await b.flush();
    const rpc = rpcClient(a, "r1", sealer(), undefined, { holdMs: 20_000 });
    const update = rpc.request("maso.r1.x.0.update", encodeJson({ n: 1 }), opts(60_000));
    await new Promise((r) => setTimeout(r, 200));
    await own.stop({ keepStore: true });
    while (!rpc.connection.down()) await new Promise((r) => setTimeout(r, 20));
    const state = rpc.request("maso.r1.x.0.state", encodeJson({ n: 2 }), opts(60_000));
    // the worker finishes the update while the server is away: its reply cannot leave
    busy = false;
    await new Promise((r) => setTimeout(r, 1000));
    const again = await startNatsServer({ port: own.port, token: own.token, storeDir: own.storeDir });
    expect(decodeJson(await update)).toEqual({ op: "update", runs: 1, echo: { n: 1 } });
    expect(decodeJson(await state)).toEqual({ op: "state", runs: 1, echo: { n: 2 } });
    // a re-send that reached the worker after the first reply came back must not have run it again
    await new Promise((r) => setTimeout(r, 500));
    expect(runs).toEqual({ update: 1, state: 1 });
    rpc.close();
    await a.close();
    await b.close();
    await again.stop();
  });
});
