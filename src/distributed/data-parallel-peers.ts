// Data-parallel ranks of one model over NATS (the update's side is rl/update/data-parallel.ts):
// rank 0 sends each other rank its share of the samples to score (`dpForward`: token ids in,
// log-probs back as raw fp32) and of each minibatch (`dpShare`: JSON samples in, its summed
// gradients back), then the summed gradients of all ranks (`dpStep`); after a
// checkpoint load a rank fetches rank 0's training state (`trainState`). Only rank 0 of the same
// model may send these, as named by the sender id inside its sealed request.
import type { NatsConnection } from "@nats-io/transport-node";
import { MasoError } from "../errors.js";
import type { DataParallelPeers, ForwardKind, PieceResult, SharedStep, ShareRequest, ShareResult } from "../rl/update/data-parallel.js";
import type { LogprobInput } from "../rl/update/forward-logprobs.js";
import type { TrainSample } from "../rl/update/types.js";
import type { WorkerGroup } from "../runtime/worker-group/worker-group.js";
import { decodeJson, encodeJson, type RpcClient } from "./rpc.js";
import { senderAddress } from "./run-key.js";
import { opSubject, type WorkerAddress, workerLabel } from "./subjects.js";
import { packTensors, packTrainState, unpackTensors } from "./weights.js";

export const DP_FORWARD_OP = "dpForward";
export const DP_SHARE_OP = "dpShare";
export const DP_STEP_OP = "dpStep";
export const TRAIN_STATE_OP = "trainState";
export const DATA_PARALLEL_OPS: readonly string[] = [DP_FORWARD_OP, DP_SHARE_OP, DP_STEP_OP, TRAIN_STATE_OP];

const bad = (what: string) => new MasoError("DATA_PARALLEL_MESSAGE", `data-parallel: ${what}`, "every rank must run the same maso version");

const FLOATS = ["oldLogp", "advantages", "returns"] as const;
const MAYBE_FLOATS = ["refLogp", "oldValues"] as const;

/** A sample as JSON (typed arrays as plain arrays: fp32 values survive the round trip exactly). */
function sampleJson(s: TrainSample): unknown {
  const arr = (a: ArrayLike<number> | null) => (a === null ? null : Array.from(a));
  return {
    ...s,
    tokens: arr(s.tokens),
    ...Object.fromEntries([...FLOATS, ...MAYBE_FLOATS].map((k) => [k, arr(s[k])])),
  };
}

const numbers = (v: unknown, what: string): number[] => {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "number" && Number.isFinite(x))) throw bad(`${what} is not a list of numbers`);
  return v;
};

/** A sample from rank 0's JSON, checked for the fields the loss reads. */
function sampleOf(v: Record<string, unknown>): TrainSample {
  const tokens = Int32Array.from(numbers(v.tokens, "tokens"));
  const n = tokens.length - Number(v.promptLen);
  if (!Number.isInteger(v.promptLen) || n < 0) throw bad("promptLen does not fit the tokens");
  const floats = (k: string, nullable: boolean) => {
    if (nullable && v[k] === null) return null;
    const a = Float32Array.from(numbers(v[k], k));
    if (a.length !== n) throw bad(`${k} has ${a.length} values for ${n} response tokens`);
    return a;
  };
  if (typeof v.role !== "string" || !(v.adapter === null || typeof v.adapter === "string")) throw bad("a sample lacks its role or adapter");
  return {
    id: Number(v.id),
    role: v.role,
    episode: String(v.episode),
    adapter: v.adapter,
    temperature: Number(v.temperature),
    tokens,
    promptLen: v.promptLen as number,
    oldLogp: floats("oldLogp", false)!,
    advantages: floats("advantages", false)!,
    returns: floats("returns", false)!,
    refLogp: floats("refLogp", true),
    oldValues: floats("oldValues", true),
    happoFactor: Number(v.happoFactor),
  };
}

function shareRequestOf(v: unknown): ShareRequest {
  const r = v as { what?: ShareRequest["what"]; d?: ShareRequest["d"]; samples?: unknown };
  if (!r?.what || !r.d || !Array.isArray(r.samples)) throw bad("a share request lacks what, d or samples");
  return { what: r.what, d: r.d, samples: r.samples.map((s) => sampleOf(s as Record<string, unknown>)) };
}

interface ShareHeader {
  pieces: PieceResult[];
  units: { name: string; length: number }[];
}

/** A log-prob forward's samples: what forward-logprobs reads of each. */
function forwardRequestOf(v: unknown): { kind: ForwardKind; samples: LogprobInput[] } {
  const r = v as { kind?: unknown; samples?: unknown };
  if ((r?.kind !== "policy" && r?.kind !== "reference") || !Array.isArray(r.samples))
    throw bad("a forward request lacks its kind or samples");
  const samples = r.samples.map((x) => {
    const s = x as Record<string, unknown>;
    const tokens = numbers(s.tokens, "tokens");
    if (!Number.isInteger(s.promptLen) || (s.promptLen as number) > tokens.length || !(s.adapter === null || typeof s.adapter === "string"))
      throw bad("a forward sample lacks its prompt length or adapter");
    return { tokens: Int32Array.from(tokens), promptLen: s.promptLen as number, adapter: s.adapter, temperature: Number(s.temperature) };
  });
  return { kind: r.kind, samples };
}

interface ForwardHeader {
  outputs: { logp: number; values: number | null }[];
}

const forwardLengths = (h: ForwardHeader) =>
  Array.isArray(h?.outputs) ? h.outputs.flatMap((o) => (o.values === null ? [o.logp] : [o.logp, o.values])) : [];

interface StepHeader {
  units: { name: string; lr: number; length: number }[] | null;
}

/**
 * Rank 0's view of its model's other ranks, reached over `rpc`.
 *
 * @example
 * wg.dataParallel.setPeers(rpcPeers({ nc, rpc, run: "r1", model: "base", count: 1, timeoutMs: 600_000, label: "worker base/0" }));
 */
export function rpcPeers(o: {
  nc: NatsConnection;
  rpc: RpcClient;
  run: string;
  model: string;
  count: number;
  timeoutMs: number;
  label: string;
}): DataParallelPeers {
  const request = (rank: number, op: string, body: Uint8Array) => {
    const peer = workerLabel({ model: o.model, rank });
    return o.rpc.request(opSubject(o.run, { model: o.model, rank }, op), body, {
      timeoutMs: o.timeoutMs,
      label: `${o.label} → ${peer} ${op}`,
      worker: peer,
    });
  };
  return {
    count: o.count,
    // the client writes from the event loop: flush() has the server hold every request sent so far
    sent: () => o.nc.flush(),
    async forwards(rank, kind, samples) {
      const body = samples.map((s) => ({
        tokens: Array.from(s.tokens),
        promptLen: s.promptLen,
        adapter: s.adapter,
        temperature: s.temperature,
      }));
      const bytes = await request(rank, DP_FORWARD_OP, encodeJson({ kind, samples: body }));
      const { header, tensors } = unpackTensors<ForwardHeader>(bytes, forwardLengths, bad);
      let t = 0;
      return header.outputs.map((x) => ({ logp: tensors[t++], values: x.values === null ? null : tensors[t++] }));
    },
    async gradients(rank, req) {
      const bytes = await request(rank, DP_SHARE_OP, encodeJson({ what: req.what, d: req.d, samples: req.samples.map(sampleJson) }));
      const { header, tensors } = unpackTensors<ShareHeader>(
        bytes,
        (h) => (Array.isArray(h?.units) ? h.units.map((u) => u.length) : []),
        bad,
      );
      return { pieces: header.pieces, grads: new Map(header.units.map((u, i) => [u.name, tensors[i]])) };
    },
    async step(req) {
      const header: StepHeader = { units: req.units?.map((u) => ({ name: u.name, lr: u.lr, length: u.grads.length })) ?? null };
      const body = packTensors(header, req.units?.map((u) => u.grads) ?? []);
      await Promise.all(Array.from({ length: o.count }, (_, i) => request(i + 1, DP_STEP_OP, body)));
    },
  };
}

/** A data-parallel op's sender must be rank 0 of this worker's model (and this worker one of its other ranks). */
function checkSender(address: WorkerAddress, label: string, from: string, op: string): void {
  const s = senderAddress(from);
  if (address.rank === 0 || s?.model !== address.model || s.rank !== 0)
    throw new MasoError("DATA_PARALLEL_DENIED", `${label} takes ${op} from rank 0 of ${address.model} only, not from ${from}`, "");
}

/**
 * The data-parallel ops a worker serves: on a rank > 0, `dpShare` and `dpStep` from rank 0; on rank
 * 0, `trainState` for its other ranks. Returns null for any other op.
 */
export function servePeerOp(
  c: { wg: WorkerGroup; address: WorkerAddress; label: string; version: () => number },
  op: string,
  payload: Uint8Array,
  from: string,
): Promise<Uint8Array> | null {
  if (!DATA_PARALLEL_OPS.includes(op)) return null;
  return (async () => {
    if (op === TRAIN_STATE_OP) {
      const s = senderAddress(from);
      if (c.address.rank !== 0 || s?.model !== c.address.model || s.rank === 0)
        throw new MasoError(
          "WEIGHTS_DENIED",
          `${c.label} sends its training state to ranks of ${c.address.model} only, not to ${from}`,
          "",
        );
      return packTrainState(c.wg.units, c.version());
    }
    checkSender(c.address, c.label, from, op);
    if (op === DP_FORWARD_OP) {
      const req = forwardRequestOf(decodeJson(payload));
      const outs = await c.wg.dataParallel.forwards(req.kind, req.samples);
      const header: ForwardHeader = { outputs: outs.map((x) => ({ logp: x.logp.length, values: x.values?.length ?? null })) };
      return packTensors(
        header,
        outs.flatMap((x) => (x.values ? [x.logp, x.values] : [x.logp])),
      );
    }
    if (op === DP_SHARE_OP) {
      const res: ShareResult = await c.wg.dataParallel.share(shareRequestOf(decodeJson(payload)));
      const units = [...res.grads].map(([name, g]) => ({ name, length: g.length }));
      return packTensors({ pieces: res.pieces, units } satisfies ShareHeader, [...res.grads.values()]);
    }
    const { header, tensors } = unpackTensors<StepHeader>(payload, (h) => h?.units?.map((u) => u.length) ?? [], bad);
    const step: SharedStep = { units: header.units?.map((u, i) => ({ name: u.name, lr: u.lr, grads: tensors[i] })) ?? null };
    return encodeJson({ norm: await c.wg.dataParallel.step(step) });
  })();
}
