// Request/reply over core NATS with chunking: a payload above the server's max_payload travels as
// numbered chunks (headers Maso-Chunk "i/n"), reassembled by index on the other side. Every request
// has a timeout; replies come back on one inbox subscription per client. Errors travel as data
// (code, message, hint) and are rethrown as the same MasoError, so a refusal reads exactly as it
// would in-process (a code this side does not know becomes REMOTE_ERROR). Every body is sealed with
// the run key (run-key.ts): a request for its subject and reply inbox, a reply for its inbox, the
// request it answers (sender and sequence) and its status, so a client without the key can neither
// read a call nor forge, redirect or replay one.
import { headers, type Msg, type MsgHdrs, type NatsConnection, nuid } from "@nats-io/transport-node";
import { MasoError, remoteError } from "../errors.js";
import { type ConnectionWatch, inboxOf, watchConnection } from "./connect.js";
import type { Sealer } from "./run-key.js";
import { RUN_HEADER } from "./subjects.js";

const CHUNK = "Maso-Chunk";
const STATUS = "Maso-Status";
/** Room left for headers inside max_payload. */
const HEADER_ROOM = 4096;
/** A request whose other chunks never arrive is dropped after this long. */
const PARTIAL_TTL_MS = 10 * 60_000;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

export const encodeJson = (v: unknown): Uint8Array => utf8.encode(JSON.stringify(v) ?? "null");
export const decodeJson = (b: Uint8Array): unknown => JSON.parse(fromUtf8.decode(b));

interface ErrorBody {
  code: string;
  message: string;
  hint: string;
}

function chunkSize(nc: NatsConnection): number {
  return Math.max(1024, (nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM);
}

/** Publishes `payload` to `subject` as one or more chunks, each with the given headers. */
function publishChunks(nc: NatsConnection, subject: string, payload: Uint8Array, base: Record<string, string>, reply?: string): void {
  const size = chunkSize(nc);
  const n = Math.max(1, Math.ceil(payload.length / size));
  for (let i = 0; i < n; i++) {
    const h = headers();
    for (const [k, v] of Object.entries(base)) h.set(k, v);
    h.set(CHUNK, `${i}/${n}`);
    nc.publish(subject, payload.subarray(i * size, (i + 1) * size), { headers: h, ...(reply && { reply }) });
  }
}

const requestContext = (subject: string, reply: string) => `req ${subject} ${reply}`;
const replyContext = (inbox: string, sender: string, seq: number, status: string) => `rep ${inbox} ${sender} ${seq} ${status}`;

/** Collects chunks by key until each key's message is whole. */
function reassembler() {
  const parts = new Map<string, { chunks: Uint8Array[]; got: number; at: number }>();
  return {
    /** The whole payload once its last chunk arrived, else null. */
    add(key: string, h: MsgHdrs | undefined, data: Uint8Array): Uint8Array | null {
      const m = /^(\d+)\/(\d+)$/.exec(h?.get(CHUNK) ?? "0/1");
      const [i, n] = m ? [Number(m[1]), Number(m[2])] : [0, 1];
      if (n === 1) return data;
      const now = Date.now();
      for (const [k, p] of parts) if (now - p.at > PARTIAL_TTL_MS) parts.delete(k);
      const p = parts.get(key) ?? { chunks: new Array<Uint8Array>(n), got: 0, at: now };
      parts.set(key, p);
      if (!p.chunks[i]) p.got++;
      p.chunks[i] = data;
      if (p.got < n) return null;
      parts.delete(key);
      const out = new Uint8Array(p.chunks.reduce((a, c) => a + c.length, 0));
      let o = 0;
      for (const c of p.chunks) {
        out.set(c, o);
        o += c.length;
      }
      return out;
    },
    drop: (key: string) => parts.delete(key),
  };
}

export interface RequestOptions {
  timeoutMs: number;
  /** Who and what the request is for, e.g. "coder/0 update": named by timeout and loss errors. */
  label: string;
  /** The worker this request waits on (failPending matches on it). */
  worker: string;
}

/** The client side: requests with chunked payloads, timeouts and bulk failure of pending calls. */
export interface RpcClient {
  request(subject: string, payload: Uint8Array, o: RequestOptions): Promise<Uint8Array>;
  /** Fails every pending request to `worker` with `err(label)` (a worker lost, the server gone). */
  failPending(worker: string | null, err: (label: string) => Error): void;
  /** The connection's state: while it is down every request fails at once. */
  readonly connection: ConnectionWatch;
  close(): void;
}

/**
 * Starts a client on one connection; `run` goes into every request's Maso-Run header, `url` (the
 * server) into its NATS_DISCONNECTED errors. A reply that does not open with the run key is
 * ignored and the call keeps waiting for the authentic one (or its timeout): a forged first reply
 * cannot win.
 * @example
 * const rpc = rpcClient(nc, "r1", sealer);
 * const bytes = await rpc.request(opSubject("r1", { model: "coder", rank: 0 }, "state"), encodeJson({}), { timeoutMs: 5000, label: "coder/0 state", worker: "coder/0" });
 */
export function rpcClient(nc: NatsConnection, run: string, sealer: Sealer, url = `nats://${nc.getServer()}`): RpcClient {
  const connection = watchConnection(nc, url);
  const prefix = `${inboxOf(nc)}.${nuid.next()}`;
  const pending = new Map<
    string,
    { resolve: (b: Uint8Array) => void; reject: (e: Error) => void; o: RequestOptions; timer: NodeJS.Timeout; seq: number }
  >();
  const chunks = reassembler();
  const settle = (id: string) => {
    const p = pending.get(id);
    if (p) {
      clearTimeout(p.timer);
      pending.delete(id);
      chunks.drop(id);
    }
    return p;
  };
  const sub = nc.subscribe(`${prefix}.*`, {
    callback: (err, msg) => {
      if (err) return;
      const id = msg.subject.slice(prefix.length + 1);
      if (!pending.has(id)) return;
      if (msg.headers?.code === 503) {
        // the server's "no responders": nothing subscribes to that worker's subject (gone, or not serving yet)
        const p = settle(id)!;
        p.reject(
          new MasoError(
            "WORKER_UNREACHABLE",
            `${p.o.label}: no worker listens on its subject`,
            "start the worker, or check its run id and model name",
          ),
        );
        return;
      }
      const whole = chunks.add(id, msg.headers, msg.data);
      if (!whole) return;
      const status = msg.headers?.get(STATUS) === "error" ? "error" : "ok";
      const opened = sealer.open(replyContext(msg.subject, sealer.sender, pending.get(id)!.seq, status), whole);
      if (!opened) return;
      const p = settle(id)!;
      if (status === "error") {
        const e = decodeJson(opened.body) as ErrorBody;
        p.reject(remoteError(e.code, e.message, e.hint));
      } else p.resolve(opened.body);
    },
  });
  const client: RpcClient = {
    request(subject, payload, o) {
      const id = nuid.next();
      return new Promise<Uint8Array>((resolve, reject) => {
        // published now, it would sit in the client's buffer (or be dropped) until the timeout
        if (connection.down()) return reject(connection.error(o.label));
        const timer = setTimeout(() => {
          settle(id);
          reject(
            new MasoError(
              "WORKER_TIMEOUT",
              `${o.label}: no reply within ${o.timeoutMs} ms`,
              "the worker is slow or stuck; raise runtime.nats.callTimeoutMs if the operation is expected to take longer",
            ),
          );
        }, o.timeoutMs);
        const inbox = `${prefix}.${id}`;
        try {
          // sealed and published in one go: a sender's sequence numbers reach each receiver in order
          const { bytes, seq } = sealer.seal(requestContext(subject, inbox), payload);
          pending.set(id, { resolve, reject, o, timer, seq });
          publishChunks(nc, subject, bytes, { [RUN_HEADER]: run }, inbox);
        } catch (e) {
          settle(id);
          reject(new MasoError("NATS_PUBLISH", `${o.label}: cannot send: ${(e as Error).message}`, "check the NATS connection"));
        }
      });
    },
    failPending(worker, err) {
      for (const [id, p] of [...pending]) {
        if (worker !== null && p.o.worker !== worker) continue;
        settle(id);
        p.reject(err(p.o.label));
      }
    },
    connection,
    close() {
      if (!nc.isClosed()) sub.unsubscribe();
      client.failPending(null, (label) => new MasoError("NATS_CLOSED", `${label}: the connection closed`, ""));
    },
  };
  // replies in flight when the server goes away are lost with it: fail those calls now, not at their timeout
  connection.onDown(() => client.failPending(null, (label) => connection.error(label)));
  return client;
}

/** What a served operation returns: bytes, or an error that travels back as data. `from` is the authenticated sender id. */
export type RpcHandler = (op: string, payload: Uint8Array, from: string) => Promise<Uint8Array>;

/**
 * Serves requests on `subject` (a wildcard whose last token is the op). A request that does not
 * open with the run key (forged, replayed, moved to another subject) is dropped unanswered; one
 * whose Maso-Run header is not `run` is refused (WORKER_WRONG_RUN) without reaching the handler;
 * handlers run concurrently, as the in-process transport would call them.
 */
export function serveRpc(
  nc: NatsConnection,
  subject: string,
  run: string,
  sealer: Sealer,
  label: string,
  handler: RpcHandler,
): { stop(): void } {
  const chunks = reassembler();
  const reply = (msg: Msg, req: { sender: string; seq: number }, body: Uint8Array, status: "ok" | "error") => {
    if (!msg.reply) return;
    const { bytes } = sealer.seal(replyContext(msg.reply, req.sender, req.seq, status), body);
    publishChunks(nc, msg.reply, bytes, { [STATUS]: status });
  };
  const fail = (msg: Msg, req: { sender: string; seq: number }, e: unknown) => {
    const body: ErrorBody =
      e instanceof MasoError
        ? { code: e.code, message: e.what, hint: e.hint }
        : { code: "WORKER_ERROR", message: `${label}: ${(e as Error)?.message ?? String(e)}`, hint: "see the worker's log" };
    reply(msg, req, encodeJson(body), "error");
  };
  const sub = nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) return;
      const whole = chunks.add(msg.reply ?? msg.subject, msg.headers, msg.data);
      if (!whole) return;
      const req = sealer.open(requestContext(msg.subject, msg.reply ?? ""), whole);
      if (!req) return;
      const from = msg.headers?.get(RUN_HEADER) ?? "";
      if (from !== run) {
        fail(
          msg,
          req,
          new MasoError(
            "WORKER_WRONG_RUN",
            `${label} serves run "${run}" and refuses a message for run "${from}"`,
            "start one worker per run",
          ),
        );
        return;
      }
      const op = msg.subject.slice(msg.subject.lastIndexOf(".") + 1);
      handler(op, req.body, req.sender).then(
        (out) => reply(msg, req, out, "ok"),
        (e) => fail(msg, req, e),
      );
    },
  });
  return { stop: () => sub.unsubscribe() };
}
