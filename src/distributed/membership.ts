// Who is serving a run: each worker keeps a KV entry `workers.<model>.<rank>` fresh (a heartbeat
// from its own thread); the controller watches the bucket, waits until every worker it needs has
// beaten, and calls a worker lost when its entry goes stale for the heartbeat timeout or is
// deleted. Freshness is judged on the controller's clock, so machines' clocks need not agree.
import { type KV, KvWatchInclude, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { MasoError } from "../errors.js";
import { startThread } from "../start-thread.js";
import { type ConnectionWatch, isDenied, type NatsAuth, permissionError } from "./connect.js";
import { openKv, type Sealer } from "./run-key.js";
import { memberKey, roleInbox, runBucket, type WorkerAddress, workerLabel } from "./subjects.js";

/** What a worker announces about itself. */
export interface MemberEntry {
  model: string;
  rank: number;
  pid: number;
  host: string;
  threads: number;
  /** Updates the worker's weights have seen (replicas: the synced version). */
  version: number;
  /** The controller start the worker was built for. */
  session: string;
  /** False while the worker builds its model under its claim on the address; the controller calls it once true. */
  serving: boolean;
}

/**
 * Refuses to serve an address another live worker already serves: when its membership entry exists,
 * watches it for 2.5 heartbeat intervals, and a new beat in that time is a live worker
 * (WORKER_DUPLICATE, naming it); an entry that stays still is a dead worker's and may be taken over.
 * Clock-free: only revisions are compared. Returns the revision a claim must follow (0: no entry).
 */
async function refuseIfServed(kv: KV, o: ClaimOptions): Promise<number> {
  const first = await kv.get(o.key);
  if (first?.operation !== "PUT") return first?.revision ?? 0;
  await new Promise((r) => setTimeout(r, Math.min(2.5 * o.heartbeat.intervalMs, 60_000)));
  const now = await kv.get(o.key);
  if (now?.operation === "PUT" && now.revision !== first.revision) throw duplicate(o.label, o.read(now.value), "");
  return now?.revision ?? 0;
}

const duplicate = (label: string, other: MemberEntry | null, how: string) =>
  new MasoError(
    "WORKER_DUPLICATE",
    `worker ${label} is already served${other ? ` by pid ${other.pid} on ${other.host}` : ""}${how}: two workers for one model and rank would both answer every call`,
    "stop one of them, or start this one with another --rank (a generation replica)",
  );

export interface ClaimOptions {
  key: string;
  label: string;
  /** Opens a membership entry (null: not sealed with this run's key). */
  read: (value: Uint8Array) => MemberEntry | null;
  heartbeat: Omit<HeartbeatOptions, "claim">;
}

/**
 * Takes a model and rank for this process before it builds anything: refuses a live worker's address
 * (refuseIfServed), then starts the heartbeat, whose first beat is written only if the entry is
 * still the one judged free. Of two workers that start at once exactly one wins that write; the other
 * is refused here, so a duplicate never serves a call. The entry says `serving: false` until the
 * worker listens (Heartbeat.update).
 */
export async function claimAddress(kv: KV, o: ClaimOptions): Promise<Heartbeat> {
  const claim = await refuseIfServed(kv, o);
  try {
    return await startHeartbeat({ ...o.heartbeat, claim });
  } catch (e) {
    if (!(e instanceof ClaimTaken)) throw e;
    const now = await kv.get(o.key).catch(() => null);
    throw duplicate(o.label, now?.operation === "PUT" ? o.read(now.value) : null, " (it claimed the address as this one started)");
  }
}

/** Opens (creating if needed) the run's KV bucket; both sides may be first. */
export async function openRunBucket(nc: NatsConnection, run: string): Promise<KV> {
  try {
    return await new Kvm(nc).create(runBucket(run), { history: 1 });
  } catch (e) {
    if (isDenied(e)) throw permissionError(`opening the run's KV bucket ${runBucket(run)}`, e);
    throw new MasoError(
      "NATS_JETSTREAM",
      `cannot open the run's KV bucket ${runBucket(run)}: ${(e as Error).message}`,
      "start nats-server with JetStream enabled (-js)",
    );
  }
}

export interface Heartbeat {
  /** Changes what the entry announces (the weights version, serving), with a beat at once. */
  update(entry: Partial<MemberEntry>): void;
  /** Stops beating and deletes the entry, so the controller sees a clean exit. */
  stop(): Promise<void>;
  /** Resolves if the thread's connection closes for good (the server gone past the reconnect window). */
  readonly closed: Promise<void>;
}

export interface HeartbeatOptions {
  url: string;
  auth: NatsAuth;
  run: string;
  /** Seals the entries (the thread builds its own sealer from it). */
  runKey: Buffer;
  entry: MemberEntry;
  intervalMs: number;
  reconnectSeconds: number;
  /** The revision the first beat must follow (0: no entry): another writer in between takes the address. */
  claim: number;
}

/** The first beat found another worker's claim. */
class ClaimTaken extends Error {}

/** Starts the heartbeat thread of one worker; resolves once the first beat is written. */
export async function startHeartbeat(o: HeartbeatOptions): Promise<Heartbeat> {
  const t = startThread(import.meta.url, "./heartbeat-thread", {
    url: o.url,
    auth: o.auth,
    bucket: runBucket(o.run),
    key: memberKey(o.entry),
    runKey: o.runKey.toString("hex"),
    inbox: roleInbox(o.run, { kind: "worker", model: o.entry.model }),
    intervalMs: o.intervalMs,
    reconnectSeconds: o.reconnectSeconds,
    entry: o.entry,
    claim: o.claim,
  });
  const closed = new Promise<void>((resolve) => t.on("message", (m: { closed?: boolean }) => m.closed && resolve()));
  t.unref();
  const started = await new Promise<{ started?: boolean; taken?: boolean; failed?: string }>((resolve, reject) => {
    t.once("message", resolve);
    t.once("error", (e) =>
      reject(new MasoError("WORKER_HEARTBEAT", `the heartbeat thread failed: ${e.message}`, "check the NATS connection")),
    );
  });
  if (!started.started) {
    await t.terminate();
    if (started.taken) throw new ClaimTaken();
    throw new MasoError(
      "WORKER_HEARTBEAT",
      `the first heartbeat failed: ${started.failed}`,
      "check the NATS connection and this worker's permissions",
    );
  }
  return {
    closed,
    update: (entry) => t.postMessage({ entry }),
    async stop() {
      const done = new Promise<void>((resolve) => t.once("message", () => resolve()));
      t.postMessage({ stop: true });
      await Promise.race([done, new Promise((r) => setTimeout(r, 2000))]);
      await t.terminate();
    },
  };
}

export interface MemberWatch {
  /** Resolves once every address has beaten for `session` since the watch began; the error names the missing ones. */
  waitFor(addresses: readonly WorkerAddress[], session: string, timeoutMs: number, abort?: () => Error | null): Promise<void>;
  /** The addresses that have not beaten for `session` (or were lost since). */
  missing(addresses: readonly WorkerAddress[], session: string): WorkerAddress[];
  /** Called once per worker that goes stale or leaves, with its label and why. */
  onLost(cb: (label: string, why: string) => void): void;
  stop(): void;
}

/**
 * Watches the membership entries. Only beats written after the watch began count, so an entry a
 * dead worker left behind never passes for a live one. While `conn` (the watcher's own connection)
 * is down no beat can arrive, so none is judged: silence then is the server's, not a worker's.
 */
export async function watchMembers(
  kv: KV,
  bucket: string,
  sealer: Sealer,
  heartbeatTimeoutMs: number,
  conn?: ConnectionWatch,
): Promise<MemberWatch> {
  const seen = new Map<string, { entry: MemberEntry; at: number }>();
  /** Per address, every worker process that has beaten for it: a restart's old one never beats again, a duplicate's does. */
  const beaters = new Map<string, Set<string>>();
  /** Per address, the process of its latest beat. */
  const latest = new Map<string, string>();
  const lost = new Set<string>();
  const listeners: ((label: string, why: string) => void)[] = [];
  const lose = (label: string, why: string) => {
    if (lost.has(label) || !seen.has(label)) return;
    lost.add(label);
    for (const cb of listeners) cb(label, why);
  };
  const follow = async (it: Awaited<ReturnType<KV["watch"]>>) => {
    for await (const e of it) {
      if (e.operation !== "PUT") {
        const [, model, rank] = e.key.split(".");
        lose(`${model}/${rank}`, "left the run");
        continue;
      }
      const entry = openKv<MemberEntry>(sealer, bucket, e.key, e.value);
      if (!entry) continue;
      const label = workerLabel(entry);
      const who = `pid ${entry.pid} on ${entry.host}`;
      const prev = latest.get(label);
      const beat = beaters.get(label) ?? new Set<string>();
      beaters.set(label, beat);
      if (prev && prev !== who && beat.has(who)) {
        // claims make this rare (claimAddress); a worker cut off long enough to be taken over, then back, still does it
        lose(label, `is served by two worker processes (${who} and ${prev}), which both answer every call: stop one (WORKER_DUPLICATE)`);
        continue;
      }
      beat.add(who);
      latest.set(label, who);
      // a worker still building under its claim is not called yet, nor judged
      if (!entry.serving) continue;
      seen.set(label, { entry, at: Date.now() });
      // a worker rebuilding for a new controller start leaves and comes back before the run begins
      lost.delete(label);
    }
  };
  const watchNew = () => kv.watch({ key: "workers.>", include: KvWatchInclude.UpdatesOnly });
  let it = await watchNew();
  let stopped = false;
  void follow(it).catch(() => {});
  // every worker gets a full timeout again from the reconnect; a server that restarted lost the
  // watch's consumer, which the client would notice only after two missed idle heartbeats (10 s):
  // a new watch follows the beats at once
  conn?.onUp(() => {
    for (const s of seen.values()) s.at = Date.now();
    void (async () => {
      // JetStream may need a moment after a restart: try for a few seconds
      for (let i = 0; i < 20 && !stopped && !conn.down(); i++) {
        const next = await watchNew().catch(() => null);
        if (!next) {
          await new Promise((r) => setTimeout(r, 250));
          continue;
        }
        it.stop();
        it = next;
        if (stopped) next.stop();
        else void follow(next).catch(() => {});
        return;
      }
    })();
  });
  const sweep = setInterval(
    () => {
      if (conn?.down()) return;
      const now = Date.now();
      for (const [label, s] of seen)
        if (now - s.at > heartbeatTimeoutMs) lose(label, `sent no heartbeat for ${now - s.at} ms (timeout ${heartbeatTimeoutMs} ms)`);
    },
    Math.max(50, Math.min(500, heartbeatTimeoutMs / 4)),
  );
  sweep.unref();
  const missingOf = (addresses: readonly WorkerAddress[], session: string) =>
    addresses.filter((a) => seen.get(workerLabel(a))?.entry.session !== session || lost.has(workerLabel(a)));
  return {
    missing: missingOf,
    async waitFor(addresses, session, timeoutMs, abort) {
      const t0 = Date.now();
      for (;;) {
        const missing = missingOf(addresses, session).map(workerLabel);
        if (missing.length === 0) return;
        const stop = abort?.();
        if (stop) throw stop;
        if (Date.now() - t0 > timeoutMs)
          throw new MasoError(
            "WORKER_MISSING",
            `no heartbeat from worker ${missing.join(", ")} within ${timeoutMs} ms`,
            "start them with 'maso worker --nats <url> --run <id> --model <name> --rank <r>' (docs/distributed.md)",
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    onLost: (cb) => void listeners.push(cb),
    stop() {
      stopped = true;
      clearInterval(sweep);
      it.stop();
    },
  };
}
