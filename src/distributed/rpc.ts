// Request/reply over core NATS with chunking: a payload above the server's max_payload travels as
// numbered chunks (headers Maso-Chunk "i/n"), reassembled by index on the other side. Every request
// has a timeout; replies come back on one inbox subscription per client. Errors travel as data
// (code, message, hint) and are rethrown as the same MasoError, so a refusal reads exactly as it
// would in-process (a code this side does not know becomes REMOTE_ERROR). Every body is sealed with
// the run key (run-key.ts): a request for its subject and reply inbox, a reply for its inbox, the
// request it answers (sender and sequence) and its status, so a client without the key can neither
// read a call nor forge, redirect or replay one. In hold mode (HoldOptions) a call outlives a server
// outage: the client re-sends it on reconnect under the same reply inbox, which is the call's id, and
// the server side answers a repeated id with the reply it kept instead of running the call again.
import { headers, type Msg, type MsgHdrs, type NatsConnection, nuid } from "@nats-io/transport-node";
import { MasoError, remoteError } from "../errors.js";
import { type ConnectionWatch, inboxOf, watchConnection } from "./connect.js";
import type { Sealer } from "./run-key.js";
import { RUN_HEADER } from "./subjects.js";

const CHUNK = "Maso-Chunk";
const STATUS = "Maso-Status";
/** Which send of a call a reply answers (its sequence number, which the reply's tag covers). */
const ANSWERS = "Maso-Answers";
/** After a reconnect, how long a worker may take to subscribe again before "no responders" means it is gone. */
const RESUBSCRIBE_GRACE_MS = 5000;
/** How often a held call that found no responder after a reconnect is sent again. */
const RESUBSCRIBE_RETRY_MS = 200;
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

/** Hold mode: calls wait out a server outage and are re-sent on reconnect, instead of failing at once. */
export interface HoldOptions {
  /** The longest outage calls wait out; past it every pending call fails with NATS_DISCONNECTED. */
  holdMs: number;
  /** Called once a hold ran out (every pending call failed). */
  onGiveUp?: () => void;
}

interface Pending {
  resolve: (b: Uint8Array) => void;
  reject: (e: Error) => void;
  o: RequestOptions;
  /** The call timeout, running from the latest send (null while the call is held). */
  timer: NodeJS.Timeout | null;
  /** The sequence number of every send of this call: a reply may answer any of them. */
  seqs: number[];
  subject: string;
  payload: Uint8Array;
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

const timeoutError = (o: RequestOptions) =>
  new MasoError(
    "WORKER_TIMEOUT",
    `${o.label}: no reply within ${o.timeoutMs} ms`,
    "the worker is slow or stuck; raise runtime.nats.callTimeoutMs if the operation is expected to take longer",
  );

const unreachableError = (o: RequestOptions) =>
  new MasoError(
    "WORKER_UNREACHABLE",
    `${o.label}: no worker listens on its subject`,
    "start the worker, or check its run id and model name",
  );

/**
 * What the client does with its pending calls when the server goes away and comes back: fail them
 * at once (no `hold`), or keep them, fail them once `hold.holdMs` has passed, and re-send them all on
 * reconnect. A held call's timeout starts again from its re-send.
 */
function outagePolicy(
  c: { nc: NatsConnection; connection: ConnectionWatch; pending: Map<string, Pending> },
  send: (id: string, p: Pending) => void,
  failAll: (err: (label: string) => Error) => void,
  hold?: HoldOptions,
) {
  let holdTimer: NodeJS.Timeout | null = null;
  let expired = false;
  /** Until when "no responders" may be a worker that has not subscribed again since the reconnect. */
  let graceUntil = 0;
  const giveUp = () => {
    expired = true;
    failAll((label) => c.connection.error(label));
    hold?.onGiveUp?.();
  };
  c.connection.onDown(() => {
    // without hold, replies in flight when the server goes away are lost with it: fail those calls now, not at their timeout
    if (!hold) return failAll((label) => c.connection.error(label));
    for (const p of c.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.timer = null;
    }
    holdTimer ??= setTimeout(giveUp, hold.holdMs);
  });
  c.connection.onUp(() => {
    if (!hold || expired) return;
    if (holdTimer) clearTimeout(holdTimer);
    holdTimer = null;
    graceUntil = Date.now() + RESUBSCRIBE_GRACE_MS;
    // the inbox subscription is back (nats.js subscribes again before it reports the reconnect)
    for (const [id, p] of c.pending) send(id, p);
  });
  // reconnect attempts ran out: nothing will come back
  void c.nc.closed().then(() => failAll((label) => c.connection.error(label)));
  return {
    /** Whether a call made now waits for the server (true) or fails at once (false); only asked while it is down. */
    holds: () => hold !== undefined && !expired,
    /** Whether "no responders" for `id` is a worker not yet subscribed again after an outage: then it is sent again soon. */
    retryUnanswered(id: string): boolean {
      if (!hold || Date.now() >= graceUntil) return false;
      setTimeout(() => {
        const p = c.pending.get(id);
        if (p && !c.connection.down()) send(id, p);
      }, RESUBSCRIBE_RETRY_MS);
      return true;
    },
  };
}

/**
 * Starts a client on one connection; `run` goes into every request's Maso-Run header, `url` (the
 * server) into its NATS_DISCONNECTED errors. A reply that does not open with the run key is
 * ignored and the call keeps waiting for the authentic one (or its timeout): a forged first reply
 * cannot win. With `hold`, calls wait out a server outage of up to `hold.holdMs` and are re-sent
 * once it is back (the worker side must keep replies: serveRpc's `keepMs`).
 * @example
 * const rpc = rpcClient(nc, "r1", sealer);
 * const bytes = await rpc.request(opSubject("r1", { model: "coder", rank: 0 }, "state"), encodeJson({}), { timeoutMs: 5000, label: "coder/0 state", worker: "coder/0" });
 */
export function rpcClient(
  nc: NatsConnection,
  run: string,
  sealer: Sealer,
  url = `nats://${nc.getServer()}`,
  hold?: HoldOptions,
): RpcClient {
  const connection = watchConnection(nc, url);
  const prefix = `${inboxOf(nc)}.${nuid.next()}`;
  const pending = new Map<string, Pending>();
  const chunks = reassembler();
  const settle = (id: string) => {
    const p = pending.get(id);
    if (p) {
      if (p.timer) clearTimeout(p.timer);
      pending.delete(id);
      chunks.drop(id);
    }
    return p;
  };
  /** Seals and publishes one send of a call (the first, or a re-send under the same inbox) and starts its timeout. */
  const send = (id: string, p: Pending) => {
    const inbox = `${prefix}.${id}`;
    try {
      // sealed and published in one go: a sender's sequence numbers reach each receiver in order
      const { bytes, seq } = sealer.seal(requestContext(p.subject, inbox), p.payload);
      p.seqs.push(seq);
      if (p.timer) clearTimeout(p.timer);
      p.timer = setTimeout(() => settle(id) && p.reject(timeoutError(p.o)), p.o.timeoutMs);
      publishChunks(nc, p.subject, bytes, { [RUN_HEADER]: run }, inbox);
    } catch (e) {
      settle(id);
      p.reject(new MasoError("NATS_PUBLISH", `${p.o.label}: cannot send: ${(e as Error).message}`, "check the NATS connection"));
    }
  };
  const failPending = (worker: string | null, err: (label: string) => Error) => {
    for (const [id, p] of [...pending]) {
      if (worker !== null && p.o.worker !== worker) continue;
      settle(id);
      p.reject(err(p.o.label));
    }
  };
  const outage = outagePolicy({ nc, connection, pending }, send, (err) => failPending(null, err), hold);
  const sub = nc.subscribe(`${prefix}.*`, {
    callback: (err, msg) => {
      if (err) return;
      const id = msg.subject.slice(prefix.length + 1);
      const p = pending.get(id);
      if (!p) return;
      if (msg.headers?.code === 503) {
        // the server's "no responders": nothing subscribes to that worker's subject (gone, or not serving yet)
        if (!outage.retryUnanswered(id)) settle(id)!.reject(unreachableError(p.o));
        return;
      }
      const whole = chunks.add(id, msg.headers, msg.data);
      if (!whole) return;
      const status = msg.headers?.get(STATUS) === "error" ? "error" : "ok";
      // a header naming no send of this call is forged: it fails to open below (and is logged)
      const named = Number(msg.headers?.get(ANSWERS));
      const answers = p.seqs.includes(named) ? named : p.seqs.at(-1)!;
      const opened = sealer.open(replyContext(msg.subject, sealer.sender, answers, status), whole);
      if (!opened) return;
      settle(id);
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
        const p: Pending = { resolve, reject, o, timer: null, seqs: [], subject, payload };
        if (!connection.down()) {
          pending.set(id, p);
          return send(id, p);
        }
        // published now, it would sit in the client's buffer (or be dropped) until the timeout
        if (!outage.holds()) return reject(connection.error(o.label));
        pending.set(id, p); // sent once the server is back
      });
    },
    failPending,
    connection,
    close() {
      if (!nc.isClosed()) sub.unsubscribe();
      failPending(null, (label) => new MasoError("NATS_CLOSED", `${label}: the connection closed`, ""));
    },
  };
  return client;
}

/** What a served operation returns: bytes, or an error that travels back as data. `from` is the authenticated sender id. */
export type RpcHandler = (op: string, payload: Uint8Array, from: string) => Promise<Uint8Array>;

interface Outcome {
  body: Uint8Array;
  status: "ok" | "error";
}

/**
 * The outcome of each call id (sender and reply inbox) for `keepMs` after it completed, so that a
 * call re-sent after a server outage is answered, not run twice; one still running is joined.
 */
function replyKeeper(keepMs: number) {
  const kept = new Map<string, { outcome: Promise<Outcome>; at: number }>();
  let swept = Date.now();
  return (id: string, run: () => Promise<Outcome>): Promise<Outcome> => {
    const now = Date.now();
    if (now - swept > 1000) {
      swept = now;
      for (const [k, e] of kept) if (now - e.at > keepMs) kept.delete(k);
    }
    const known = kept.get(id);
    if (known) return known.outcome;
    const e = { outcome: run(), at: Number.POSITIVE_INFINITY };
    kept.set(id, e);
    void e.outcome.then(() => {
      e.at = Date.now();
    });
    return e.outcome;
  };
}

/**
 * Serves requests on `subject` (a wildcard whose last token is the op). A request that does not
 * open with the run key (forged, replayed, moved to another subject) is dropped unanswered; one
 * whose Maso-Run header is not `run` is refused (WORKER_WRONG_RUN) without reaching the handler;
 * handlers run concurrently, as the in-process transport would call them. With `keepMs` (a client
 * in hold mode), a call re-sent under the same reply inbox within `keepMs` of its completion gets
 * the kept reply and does not run again.
 */
export function serveRpc(
  nc: NatsConnection,
  subject: string,
  run: string,
  sealer: Sealer,
  label: string,
  handler: RpcHandler,
  keepMs = 0,
): { stop(): void } {
  const chunks = reassembler();
  const keep = keepMs > 0 ? replyKeeper(keepMs) : null;
  const reply = (msg: Msg, req: { sender: string; seq: number }, { body, status }: Outcome) => {
    if (!msg.reply) return;
    const { bytes } = sealer.seal(replyContext(msg.reply, req.sender, req.seq, status), body);
    try {
      publishChunks(nc, msg.reply, bytes, { [STATUS]: status, [ANSWERS]: String(req.seq) });
    } catch {
      // the connection closed: a client in hold mode re-sends the call to this worker's successor
    }
  };
  const errorOutcome = (e: unknown): Outcome => {
    const body: ErrorBody =
      e instanceof MasoError
        ? { code: e.code, message: e.what, hint: e.hint }
        : { code: "WORKER_ERROR", message: `${label}: ${(e as Error)?.message ?? String(e)}`, hint: "see the worker's log" };
    return { body: encodeJson(body), status: "error" };
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
        const e = new MasoError(
          "WORKER_WRONG_RUN",
          `${label} serves run "${run}" and refuses a message for run "${from}"`,
          "start one worker per run",
        );
        return reply(msg, req, errorOutcome(e));
      }
      const op = msg.subject.slice(msg.subject.lastIndexOf(".") + 1);
      const call = () => handler(op, req.body, req.sender).then((body): Outcome => ({ body, status: "ok" }), errorOutcome);
      void (keep && msg.reply ? keep(`${req.sender} ${msg.reply}`, call) : call()).then((out) => reply(msg, req, out));
    },
  });
  return { stop: () => sub.unsubscribe() };
}
