// The controller's Transport over NATS: the same typed calls and byte/codec accounting as the
// in-process transport, carried as JSON request/reply to worker processes. A model with several
// generation replicas still looks like one worker group: role calls are sharded by episode id
// (every call of an episode on one replica, so chained prompts find their earlier sample), every
// other operation goes to rank 0, and after an update or a checkpoint load the call returns only
// once every replica has fetched rank 0's new weights (the update barrier). Under asynchronous RL a
// replica instead takes the weights rank 0 pins for each rollout (the pin barrier). A server outage fails
// every call at once, or, with `holdMs`, holds the calls and re-sends them once the server is back.
import type { NatsConnection } from "@nats-io/transport-node";
import { MasoError } from "../errors.js";
import type { GenerateRequest, PinRequest, RequestOf, ResponseOf, WorkerOp, WorkerState } from "../runtime/protocol/messages.js";
import { type Transport, trafficMeter } from "../runtime/protocol/transport.js";
import type { HostOp, HostOps, PartLocation } from "./host-ops.js";
import type { MemberWatch } from "./membership.js";
import { openPartStore, type PartStore } from "./part-transfer.js";
import { loadRemotePart, saveRemotePart } from "./remote-parts.js";
import { decodeJson, encodeJson, rpcClient } from "./rpc.js";
import type { Sealer } from "./run-key.js";
import { opSubject, type WorkerAddress, workerLabel } from "./subjects.js";

export interface NatsTransportOptions {
  nc: NatsConnection;
  /** The server's URL, named by NATS_DISCONNECTED. */
  url: string;
  run: string;
  /** Seals and opens every message with the run key. */
  sealer: Sealer;
  /** Replicas per model (1: one worker process). */
  replicas: Readonly<Record<string, number>>;
  callTimeoutMs: number;
  /** Membership: a worker it reports lost fails its pending and later calls. */
  watch: MemberWatch;
  /** The controller's run directory, which checkpoint part locations are relative to. */
  runDir: string;
  /** The largest checkpoint part carried over NATS, in bytes. */
  maxPartBytes: number;
  /** Hold mode: calls wait out a server outage this long and are re-sent after it (absent: they fail at once). */
  holdMs?: number;
  /**
   * Asynchronous RL (schedule.maxStaleness ≥ 1): replicas generate from the version rank 0 pins
   * for each rollout, fetched when pinned, instead of the newest weights after every update.
   */
  pinsVersions?: boolean;
}

/** The NATS transport plus the host operations the run loop needs (checkpoint parts, in place or carried). */
export interface NatsTransport extends Transport {
  saveCheckpointPart(model: string, loc: PartLocation): Promise<void>;
  loadCheckpointPart(model: string, loc: PartLocation): Promise<void>;
  /** A host operation on one worker (tests, tools). */
  host<K extends HostOp>(w: WorkerAddress, op: K, req: Parameters<HostOps[K]>[0]): Promise<Awaited<ReturnType<HostOps[K]>>>;
  /** Marks a worker lost now (a spawned process that exited), failing its pending calls. */
  lose(label: string, why: string): void;
  close(): void;
}

// OUTAGE: without hold, a reply or a sample may have been lost with the server, and a step that
// went on without it would not be the step an uninterrupted run takes; --resume continues exactly
// from the last checkpoint instead. In hold mode nothing is lost: every unanswered call is re-sent
// and workers keep their replies (rpc.ts).

const lostError = (label: string, why: string, when: string) =>
  new MasoError("WORKER_LOST", `worker ${label} ${why}, ${when}`, "restart the worker and continue with maso train --resume");

/** How long a vanished worker's exit reason (spawned workers) may take to arrive. */
const EXIT_GRACE_MS = 250;

/** FNV-1a of the episode id: which replica serves an episode (stable across runs and processes). */
export function replicaOf(episodeId: string, replicas: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < episodeId.length; i++) h = Math.imul(h ^ episodeId.charCodeAt(i), 0x01000193) >>> 0;
  return h % replicas;
}

/** Sums the replicas' counters into one worker group's state (rank 0 owns the cache and updates). */
function mergeStates(states: WorkerState[]): WorkerState {
  const [first, ...rest] = states;
  const out = structuredClone(first);
  for (const s of rest) {
    for (const [role, by] of Object.entries(s.calls))
      for (const [a, n] of Object.entries(by)) (out.calls[role] ??= {})[a] = (out.calls[role][a] ?? 0) + n;
    for (const [k, v] of Object.entries(s.busyMs)) out.busyMs[k] = (out.busyMs[k] ?? 0) + v;
    for (const k of ["requests", "steps", "sequenceSteps", "busyMs"] as const) out.generator[k] += s.generator[k];
  }
  return out;
}

/** Where each checkpoint part goes: its model, location, and the run's part store (remote-parts.ts). */
function partOptions(o: NatsTransportOptions) {
  // opened now, before any worker can upload, because the first open purges what a controller that
  // died mid-transfer left; a failed open is retried (without the purge) by the next checkpoint
  let store: Promise<PartStore> | null = openPartStore(o.nc, o.run, o.sealer, o.maxPartBytes, true);
  store.catch(() => {});
  const partStore = () => {
    store ??= openPartStore(o.nc, o.run, o.sealer, o.maxPartBytes);
    return store.catch((e) => {
      store = null;
      throw e;
    });
  };
  return (model: string, loc: PartLocation) => ({ model, runDir: o.runDir, loc, store: partStore });
}

type HostCall = <K extends HostOp>(w: WorkerAddress, op: K, req: Parameters<HostOps[K]>[0]) => Promise<Awaited<ReturnType<HostOps[K]>>>;

/** Every replica reports rank 0's version, or the barrier fails with WEIGHTS_STALE. */
function checkVersions(replicas: readonly WorkerAddress[], got: readonly { version: number }[], version: number, what: string): void {
  got.forEach((g, i) => {
    if (g.version !== version)
      throw new MasoError("WEIGHTS_STALE", `replica ${workerLabel(replicas[i])} ${what} version ${g.version}, rank 0 ${version}`, "");
  });
}

/** What makes a model's replicas generate from rank 0's weights: after each update, or per pinned rollout. */
function replicaBarriers(
  ranks: (model: string) => WorkerAddress[],
  hostCall: HostCall,
  pinRank0: (w: WorkerAddress, msg: PinRequest) => Promise<{ version: number }>,
) {
  return {
    /**
     * The update barrier: every replica fetches rank 0's current weights before the call returns,
     * and takes them only if their sha256 is the one rank 0 told the controller.
     */
    async syncReplicas(model: string, after: "update" | "load") {
      const [rank0, ...replicas] = ranks(model);
      const { version, sha256 } = await hostCall(rank0, "weightsDigest", {});
      checkVersions(
        replicas,
        await Promise.all(replicas.map((w) => hostCall(w, "syncWeights", { version, sha256, after }))),
        version,
        "serves",
      );
    },
    /**
     * The pin barrier (asynchronous RL): rank 0 pins first (a null version becomes the one in place
     * there), then every replica generates from rank 0's kept weights of that version, checked by
     * the sha256 rank 0 announced.
     */
    async pinReplicas(model: string, msg: PinRequest) {
      const [rank0, ...replicas] = ranks(model);
      const out = await pinRank0(rank0, msg);
      const { sha256 } = await hostCall(rank0, "weightsDigest", { version: out.version });
      const pin = { ...msg, version: out.version, sha256 };
      checkVersions(replicas, await Promise.all(replicas.map((w) => hostCall(w, "pinWeights", pin))), out.version, "pinned");
      return out;
    },
  };
}

/**
 * A Transport to worker processes on NATS; `groups()` are the models of `replicas`.
 * @example
 * const transport = natsTransport({ nc, url, run: "r1", sealer, replicas: { coder: 1, reviewer: 1 }, callTimeoutMs: 600_000, watch });
 */
export function natsTransport(o: NatsTransportOptions): NatsTransport {
  // fail fast: the first outage ends the run's calls for good, even once the server is back (see
  // OUTAGE); hold mode: only once the hold ran out
  let outage = false;
  const hold = o.holdMs ? { holdMs: o.holdMs, onGiveUp: () => void (outage = true) } : undefined;
  const rpc = rpcClient(o.nc, o.run, o.sealer, o.url, hold);
  const lost = new Map<string, string>();
  /** Workers that answered a call: a later "no responders" from one of them means it is gone. */
  const served = new Set<string>();
  const meter = trafficMeter();
  const lose = (label: string, why: string) => {
    // a worker that vanished while the server was away is the server's outage, failed as such
    if (lost.has(label) || rpc.connection.down()) return;
    lost.set(label, why);
    rpc.failPending(label, (what) => lostError(label, why, `during ${what}`));
  };
  o.watch.onLost(lose);
  if (!hold)
    rpc.connection.onDown(() => {
      outage = true;
    });
  const ranks = (model: string): WorkerAddress[] => {
    const n = o.replicas[model];
    if (!n)
      throw new MasoError("TRANSPORT_UNKNOWN_GROUP", `no worker group named "${model}"`, `known: ${Object.keys(o.replicas).join(", ")}`);
    return Array.from({ length: n }, (_, rank) => ({ model, rank }));
  };
  const send = async (w: WorkerAddress, op: string, payload: Uint8Array): Promise<Uint8Array> => {
    const label = workerLabel(w);
    // shutdown is the exception: after an outage the workers still end with the run; it is never held
    const held = hold && op !== "shutdown";
    if ((rpc.connection.down() && !held) || (outage && op !== "shutdown")) throw rpc.connection.error(`${label} ${op}`);
    const why = lost.get(label);
    if (why) throw lostError(label, why, `before ${op}`);
    try {
      const res = await rpc.request(opSubject(o.run, w, op), payload, {
        timeoutMs: o.callTimeoutMs,
        label: `${label} ${op}`,
        worker: label,
      });
      served.add(label);
      return res;
    } catch (e) {
      // the server knows at once that a worker which served this run no longer subscribes: it is
      // lost now, without waiting for its heartbeat to go stale
      if (!(e instanceof MasoError && e.code === "WORKER_UNREACHABLE" && served.has(label))) throw e;
      await new Promise((r) => setTimeout(r, EXIT_GRACE_MS)); // a spawned worker's exit reason says more
      lose(label, "stopped listening on its subjects");
      if (rpc.connection.down() || outage) throw rpc.connection.error(`${label} ${op}`);
      throw lostError(label, lost.get(label)!, `during ${op}`);
    }
  };
  /** One JSON call, counted like the in-process transport counts it. */
  const counted = async (w: WorkerAddress, op: string, msg: unknown): Promise<unknown> => {
    let t0 = performance.now();
    const req = encodeJson(msg);
    meter.codec(performance.now() - t0);
    meter.bytes(op, req.length, true);
    const res = await send(w, op, req);
    t0 = performance.now();
    const out = decodeJson(res);
    meter.codec(performance.now() - t0);
    meter.bytes(op, res.length, false);
    return out;
  };
  const hostCall: HostCall = async (w, op, req) => decodeJson(await send(w, op, encodeJson(req))) as never;
  const { syncReplicas, pinReplicas } = replicaBarriers(
    ranks,
    hostCall,
    (w, msg) => counted(w, "pin", msg) as Promise<{ version: number }>,
  );
  const replicated = (model: string) => ranks(model).length > 1;
  // under asynchronous RL a replica's weights change only when pinned
  const syncsAfterUpdate = (model: string) => replicated(model) && !o.pinsVersions;
  const partOpts = partOptions(o);

  return {
    async call<K extends WorkerOp>(group: string, op: K, msg: RequestOf<K>): Promise<ResponseOf<K>> {
      const all = ranks(group);
      if (op === "generate") {
        const w = all[replicaOf((msg as GenerateRequest).call.episodeId, all.length)];
        return (await counted(w, op, msg)) as ResponseOf<K>;
      }
      if (op === "release" || op === "discard") {
        const out = await Promise.all(all.map((w) => counted(w, op, msg)));
        return out[0] as ResponseOf<K>;
      }
      if (op === "pin" && replicated(group)) return (await pinReplicas(group, msg as PinRequest)) as ResponseOf<K>;
      if (op === "state") return mergeStates((await Promise.all(all.map((w) => counted(w, op, msg)))) as WorkerState[]) as ResponseOf<K>;
      const out = (await counted(all[0], op, msg)) as ResponseOf<K>;
      if (op === "update" && syncsAfterUpdate(group)) await syncReplicas(group, "update");
      return out;
    },
    groups: () => Object.keys(o.replicas),
    traffic: meter.traffic,
    resetTraffic: meter.reset,
    async saveCheckpointPart(model, loc) {
      await saveRemotePart(partOpts(model, loc), (req) => hostCall(ranks(model)[0], "checkpointSave", req));
    },
    async loadCheckpointPart(model, loc) {
      await loadRemotePart(partOpts(model, loc), (req) => hostCall(ranks(model)[0], "checkpointLoad", req));
      if (syncsAfterUpdate(model)) await syncReplicas(model, "load");
    },
    host: hostCall,
    lose,
    close() {
      rpc.close();
      o.watch.stop();
    },
  };
}
