// Serves one worker group over NATS: every WorkerGroupApi operation as JSON request/reply on
// `maso.<run>.<model>.<rank>.<op>`, plus the host operations (host-ops.ts). Rank 0 owns the sample
// cache that scoring and updates read; a replica (rank > 0) generates, hands each sample to rank 0
// (worker-to-worker) and answers with rank 0's id, so the controller sees one worker group.
import type { NatsConnection } from "@nats-io/transport-node";
import { MasoError } from "../errors.js";
import type { GenerateRequest, WorkerGroupApi, WorkerOp } from "../runtime/protocol/messages.js";
import type { SampleRecord, WorkerGroup } from "../runtime/worker-group/worker-group.js";
import { rpcPeers, servePeerOp, TRAIN_STATE_OP } from "./data-parallel-peers.js";
import { type HelloResponse, type HostOps, type SyncRequest, WEIGHTS_OP } from "./host-ops.js";
import { keptPacker, type PackedVersion, packedOnce, pinReplica } from "./pinned-weights.js";
import type { Heartbeat } from "./membership.js";
import { openPartStore, type PartStore } from "./part-transfer.js";
import { decodeJson, encodeJson, rpcClient, serveRpc } from "./rpc.js";
import { type Sealer, senderAddress, sha256 } from "./run-key.js";
import { opSubject, type WorkerAddress, workerLabel, workerSubjects } from "./subjects.js";
import { applyTrainState, applyWeights, packWeights, unitsDigest } from "./weights.js";
import { workerParts } from "./worker-parts.js";

export interface WorkerHostOptions {
  nc: NatsConnection;
  run: string;
  /** The worker's heartbeat, started by its claim on the address (claimAddress); the host announces itself serving through it and stops it. */
  heartbeat: Heartbeat;
  /** Seals and opens this worker's messages (its sender id names its address). */
  sealer: Sealer;
  address: WorkerAddress;
  wg: WorkerGroup;
  /** Where checkpoint parts are written and read in place (the run directory, at the controller's path or a mount of it). */
  runDir: string;
  /** Where parts are staged when the run directory is not shared (the worker's --run-dir); default the OS temp dir. */
  stageRoot?: string;
  /** The largest checkpoint part carried over NATS, in bytes. */
  maxPartBytes: number;
  /** Whether the base weights train (a weight sync then carries them, not only the adapters). */
  trainsBase: boolean;
  /** Timeout of this worker's own requests to rank 0. */
  callTimeoutMs: number;
  /** The controller start this worker was built for (from the published config). */
  session: string;
  /** Hold mode: how long each reply is kept for a call re-sent after a server outage (absent: none kept). */
  keepMs?: number;
  /** How many ranks train this model data-parallel (absent or 1: rank 0 trains alone, other ranks only generate). */
  dataParallelRanks?: number;
}

export interface WorkerHost {
  /** Resolves when the host stops (a shutdown op or stop()); the connection stays open. */
  readonly stopped: Promise<void>;
  /** Resolves if the heartbeat's connection closes for good (the server gone). */
  readonly heartbeatClosed: Promise<void>;
  stop(): Promise<void>;
}

const API_OPS: readonly WorkerOp[] = [
  "generate",
  "complete",
  "rate",
  "assignRewards",
  "computeLogprobs",
  "agentChains",
  "computeAdvantages",
  "update",
  "diagnostics",
  "discard",
  "release",
  "pin",
  "state",
];

/** A sample's asynchronous fields, where it has them: its batch, the last step its weights hold and its sampler log-probs. */
function asyncFieldsOk(r: SampleRecord): boolean {
  if (r.batch === undefined) return r.trainedThrough === undefined && r.behaviourLogp === undefined;
  const lp = r.behaviourLogp;
  return (
    Number.isInteger(r.batch) &&
    Number.isInteger(r.trainedThrough) &&
    r.trainedThrough! >= -1 &&
    (lp === null || (Array.isArray(lp) && lp.length === r.tokens.length - r.promptLen && lp.every((x) => Number.isFinite(x))))
  );
}

/** A sample record from another worker, checked before it reaches the cache. */
function checkRecord(r: SampleRecord): SampleRecord {
  const ok =
    r &&
    typeof r.role === "string" &&
    typeof r.episode === "string" &&
    typeof r.node === "string" &&
    Number.isInteger(r.visit) &&
    Number.isInteger(r.turn) &&
    (r.adapter === null || typeof r.adapter === "string") &&
    Number.isFinite(r.temperature) &&
    Array.isArray(r.tokens) &&
    r.tokens.every((t) => Number.isInteger(t) && t >= 0 && t < 2 ** 31) &&
    Number.isInteger(r.promptLen) &&
    r.promptLen > 0 &&
    r.promptLen <= r.tokens.length &&
    asyncFieldsOk(r);
  if (!ok) throw new MasoError("SAMPLE_RECORD", "adopt: malformed sample record", "only replicas of this model send samples");
  return r;
}

/** What a worker's host operations reach: its group, its place in the run, its weights version and rank 0. */
interface HostContext {
  wg: WorkerGroup;
  label: string;
  address: WorkerAddress;
  isReplica: boolean;
  /** Whether the model's ranks train data-parallel: then every rank holds the trained units and steps with rank 0. */
  dataParallel: boolean;
  session: string;
  trainsBase: boolean;
  parts: ReturnType<typeof workerParts>;
  version(): number;
  setVersion(v: number): void;
  packedWeights(): PackedVersion;
  /** Rank 0 under asynchronous RL: its kept generation weights of a version, packed. */
  keptWeights(version: number): PackedVersion;
  requestRank0(op: string, body: unknown): Promise<Uint8Array>;
  stop(): Promise<void>;
}

/** The host operations (hello, checkpoints, weight syncs, adopted samples, shutdown) of one worker. */
function hostOps(c: HostContext): HostOps {
  return {
    async hello(): Promise<HelloResponse> {
      const state = await c.wg.state({});
      const generated = Object.values(state.calls).reduce((a, by) => a + Object.values(by).reduce((x, n) => x + n, 0), 0);
      return {
        model: c.address.model,
        rank: c.address.rank,
        roles: state.roles,
        updates: c.wg.updates,
        version: c.version(),
        pid: process.pid,
        generated,
        session: c.session,
        ...(c.dataParallel && c.isReplica && { shares: c.wg.dataParallel.shares }),
      };
    },
    checkpointSave: (req) => c.parts.save(req),
    async checkpointLoad(req) {
      if (!(await c.parts.load(req))) return { needsFiles: true }; // the load bumps the weight version
      c.setVersion(c.version() + 1);
      return { version: c.version() };
    },
    async weightsDigest(req) {
      if (c.isReplica) throw new MasoError("WORKER_NOT_RANK0", `${c.label} is a replica; rank 0 holds the weights to sync`, "");
      if (req.version !== undefined) {
        const k = c.keptWeights(req.version);
        return { version: k.version, sha256: k.sha256 };
      }
      // data-parallel ranks already hold the trained units: they check a digest, nothing is packed to travel
      if (c.dataParallel) return { version: c.version(), sha256: unitsDigest(c.wg.units) };
      const p = c.packedWeights();
      return { version: p.version, sha256: p.sha256 };
    },
    async syncWeights(req) {
      if (!c.isReplica) return { version: c.version() };
      if (c.dataParallel) return syncRank(c, req);
      const bytes = await c.requestRank0(WEIGHTS_OP, { version: req.version });
      // the run key already authenticates rank 0's reply; the digest the controller got from rank 0
      // also pins its content, not only its layout
      if (sha256(bytes) !== req.sha256)
        throw new MasoError("WEIGHTS_HASH", `${c.label}: the weights from rank 0 do not have the sha256 rank 0 announced`, "");
      c.setVersion(applyWeights(c.wg.model, c.trainsBase, bytes));
      c.wg.weightVersions.bump("weight-sync");
      return { version: c.version() };
    },
    async pinWeights(req) {
      if (!c.isReplica) throw new MasoError("WORKER_OP", `${c.label} is rank 0; it pins with pin`, "");
      const out = await pinReplica(c.wg, c.label, req, async (version) => c.requestRank0(WEIGHTS_OP, { version, kept: true }));
      c.setVersion(out.version);
      return out;
    },
    async adopt(r) {
      if (c.isReplica) throw new MasoError("WORKER_NOT_RANK0", `${c.label} is a replica; samples go to rank 0`, "");
      const p = c.wg.pinned();
      // asynchronous RL: a sample joins rank 0's batch only if the replica generated it under the same pin
      if (p?.batch !== checkRecord(r).batch || p?.trainedThrough !== r.trainedThrough)
        throw new MasoError(
          "GENERATION_VERSION",
          `${c.label}: a replica generated a sample for batch ${r.batch ?? "none"} with the weights through step ${r.trainedThrough ?? "none"}, rank 0 is pinned to batch ${p?.batch ?? "none"} through step ${p?.trainedThrough ?? "none"}`,
          "every replica of the model is pinned with rank 0 before a rollout (the transport's pin)",
        );
      return { id: c.wg.adoptSample(r) };
    },
    async shutdown() {
      setImmediate(() => void c.stop());
      return { stopping: true };
    },
  };
}

/**
 * A data-parallel rank after an update: its units stepped with rank 0's summed gradients, so their
 * digest must be rank 0's (WEIGHTS_DIVERGED otherwise). After a checkpoint load it first takes rank
 * 0's training state — parameters, AdamW moments and step counts — and checks the same digest.
 */
async function syncRank(c: HostContext, req: SyncRequest): Promise<{ version: number }> {
  if (req.after === "load") applyTrainState(c.wg.units, await c.requestRank0(TRAIN_STATE_OP, {}));
  if (unitsDigest(c.wg.units) !== req.sha256)
    throw new MasoError(
      req.after === "load" ? "WEIGHTS_HASH" : "WEIGHTS_DIVERGED",
      `${c.label}: its trained weights differ from rank 0's ${req.after === "load" ? "after taking its training state" : "after the update"}`,
      "every rank must run the same maso build on a CPU with the same kernels",
    );
  c.setVersion(req.version);
  c.wg.weightVersions.bump(req.after === "load" ? "weight-sync" : "update");
  return { version: c.version() };
}

/**
 * Rank 0's weights for a replica of its own model: the version it holds, or (`kept`, asynchronous
 * RL) a generation version it still keeps.
 */
function weightsFor(c: HostContext, from: string, want: { version: number; kept?: boolean }): Uint8Array {
  const asker = senderAddress(from);
  if (c.isReplica || asker?.model !== c.address.model || asker.rank === 0)
    throw new MasoError("WEIGHTS_DENIED", `${c.label} sends its weights to replicas of ${c.address.model} only, not to ${from}`, "");
  if (want.kept) return c.keptWeights(want.version).bytes;
  if (want.version !== c.version())
    throw new MasoError("WEIGHTS_STALE", `${c.label} holds weights version ${c.version()}, a replica asked for ${want.version}`, "");
  return c.packedWeights().bytes;
}

/** A replica's own ids of rank 0's sample ids, each forgotten (rank 0 discards them). */
function forgetLocal(local: Map<number, number>, ids: readonly number[]): number[] {
  const mine = ids.flatMap((id) => (local.has(id) ? [local.get(id)!] : []));
  for (const id of ids) local.delete(id);
  return mine;
}

/** A replica's release: its samples of the batch (or all) go, and its ids of rank 0's for them. */
async function releaseReplica(wg: WorkerGroup, local: Map<number, number>, req: { batch?: number }) {
  const out = await wg.release(req);
  for (const [id, mine] of local) if (!wg.sampleRecord(mine)) local.delete(id);
  return out;
}

/** A replica's generate: sample here, then hand a kept sample to rank 0 and answer with its id there. */
function replicaGenerator(wg: WorkerGroup, local: Map<number, number>, toRank0: (op: string, body: unknown) => Promise<unknown>) {
  return async (req: GenerateRequest) => {
    const e = req.call.extend;
    // the chain names rank 0's id of the earlier sample; this rank holds it under its own
    const mine = e ? { ...req, call: { ...req.call, extend: { ...e, sample: { ...e.sample, id: local.get(e.sample.id) ?? -1 } } } } : req;
    const res = await wg.generate(mine);
    if (res.sampleHandle === null) return res; // an un-kept call: nothing to hand over
    const { id } = (await toRank0("adopt", wg.sampleRecord(res.sampleHandle.id))) as { id: number };
    local.set(id, res.sampleHandle.id);
    return { ...res, sampleHandle: { ...res.sampleHandle, id } };
  };
}

/** The run's checkpoint part store, opened on first use; a failed open is retried by the next checkpoint, not kept. */
function lazyPartStore(o: Pick<WorkerHostOptions, "nc" | "run" | "sealer" | "maxPartBytes">): () => Promise<PartStore> {
  let store: Promise<PartStore> | null = null;
  return () => {
    store ??= openPartStore(o.nc, o.run, o.sealer, o.maxPartBytes);
    return store.catch((e) => {
      store = null;
      throw e;
    });
  };
}

/**
 * Serves `wg` until a shutdown op or stop(); announces the worker with a heartbeat once it listens.
 * @example
 * const host = await serveWorkerGroup({ nc, run: "r1", heartbeat, sealer, address: { model: "coder", rank: 0 }, wg, runDir, trainsBase: false, callTimeoutMs: 600000 });
 * await host.stopped;
 */
export async function serveWorkerGroup(o: WorkerHostOptions): Promise<WorkerHost> {
  const { wg, run, address } = o;
  const label = `worker ${workerLabel(address)}`;
  const rank0 = { model: address.model, rank: 0 };
  const isReplica = address.rank > 0;
  const rpc = rpcClient(o.nc, run, o.sealer);
  let version = 0;
  /** Replicas: rank 0's sample id → this replica's id, for chained prompts and discards. */
  const local = new Map<number, number>();
  const api = wg as WorkerGroupApi;
  const { heartbeat } = o;
  const setVersion = (v: number) => {
    version = v;
    heartbeat.update({ version });
  };
  const parts = workerParts({ wg, label, runDir: o.runDir, stageRoot: o.stageRoot, store: lazyPartStore(o) });
  const requestRank0 = (op: string, body: unknown): Promise<Uint8Array> =>
    rpc.request(opSubject(run, rank0, op), encodeJson(body), {
      timeoutMs: o.callTimeoutMs,
      label: `${label} → ${workerLabel(rank0)} ${op}`,
      worker: workerLabel(rank0),
    });
  const toRank0 = async (op: string, body: unknown) => decodeJson(await requestRank0(op, body));
  /** Rank 0: this version's packed weights and their sha256, packed once however many replicas fetch them. */
  const packVersion = packedOnce((v) => packWeights(wg.model, o.trainsBase, v));
  const packedWeights = () => packVersion(version);

  const replicaGenerate = replicaGenerator(wg, local, toRank0);

  const dataParallel = (o.dataParallelRanks ?? 1) > 1;
  if (dataParallel && !isReplica)
    wg.dataParallel.setPeers(
      rpcPeers({ nc: o.nc, rpc, run, model: address.model, count: o.dataParallelRanks! - 1, timeoutMs: o.callTimeoutMs, label }),
    );
  const ctx: HostContext = {
    wg,
    label,
    address,
    isReplica,
    dataParallel,
    session: o.session,
    trainsBase: o.trainsBase,
    parts,
    version: () => version,
    setVersion,
    packedWeights,
    keptWeights: keptPacker(wg, label),
    requestRank0,
    stop: () => stop(),
  };
  const host = hostOps(ctx);

  const handle = async (op: string, payload: Uint8Array, from: string): Promise<Uint8Array> => {
    const peerOp = servePeerOp({ wg, address, label, version: () => version }, op, payload, from);
    if (peerOp) return peerOp;
    const req = decodeJson(payload) as never;
    if (op === WEIGHTS_OP) return weightsFor(ctx, from, req);
    // own keys only: an op named after an Object.prototype member must not reach it
    if (Object.hasOwn(host, op)) return encodeJson(await host[op as keyof HostOps](req));
    if (!API_OPS.includes(op as WorkerOp)) throw new MasoError("WORKER_OP", `${label} has no operation "${op}"`, "");
    if (isReplica && op === "generate") return encodeJson(await replicaGenerate(req));
    if (isReplica && op === "discard") return encodeJson(await wg.discard({ ids: forgetLocal(local, (req as { ids: number[] }).ids) }));
    if (isReplica && op === "release") return encodeJson(await releaseReplica(wg, local, req));
    const out = await (api[op as WorkerOp] as (r: never) => Promise<unknown>)(req);
    if (op === "update") setVersion(version + 1);
    return encodeJson(out);
  };

  let done!: () => void;
  const stopped = new Promise<void>((r) => {
    done = r;
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return stopped;
    stopping = true;
    server.stop();
    rpc.close();
    await heartbeat.stop();
    done();
  };
  const server = serveRpc(o.nc, workerSubjects(run, address), run, o.sealer, label, handle, o.keepMs);
  // announce only once the subscription is on the server: a controller may call the moment it sees the beat
  await o.nc.flush();
  heartbeat.update({ serving: true });
  return { stopped, stop, heartbeatClosed: heartbeat.closed };
}
