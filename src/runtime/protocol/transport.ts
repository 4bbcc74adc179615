// How the controller reaches worker groups: one `call(group, op, message)` interface, with an
// in-process implementation that JSON-encodes every message both ways (so nothing but data can
// cross) and counts the bytes. A worker_threads or NATS transport implements the same interface.
import { MasoError } from "../../errors.js";
import type { RequestOf, ResponseOf, WorkerGroupApi, WorkerOp } from "./messages.js";

/** Traffic across the controller ↔ worker boundary since the last reset. */
export interface TrafficStats {
  messages: number;
  /** Controller → worker bytes (UTF-8 JSON). */
  bytesToWorkers: number;
  /** Worker → controller bytes. */
  bytesToController: number;
  byOp: Record<string, { messages: number; bytes: number }>;
  /** Time spent encoding and decoding messages (controller-side cost), ms. */
  codecMs: number;
}

/** How one call is heard while it runs. */
export interface CallOptions {
  /** `generate` only: the output text as it decodes (a transport that cannot stream sends it all at the end). */
  onText?: (delta: string) => void;
}

export interface Transport {
  call<K extends WorkerOp>(group: string, op: K, msg: RequestOf<K>, opts?: CallOptions): Promise<ResponseOf<K>>;
  /** Names of the reachable worker groups. */
  groups(): string[];
  traffic(): TrafficStats;
  resetTraffic(): void;
}

const blank = (): TrafficStats => ({ messages: 0, bytesToWorkers: 0, bytesToController: 0, byOp: {}, codecMs: 0 });

/** The byte and codec counters every transport keeps, counted the same way whatever carries the messages. */
export function trafficMeter() {
  let stats = blank();
  return {
    /** One encoded message: a request (`toWorker`, counted as a message) or its response. */
    bytes(op: string, bytes: number, toWorker: boolean): void {
      if (toWorker) stats.bytesToWorkers += bytes;
      else stats.bytesToController += bytes;
      const o = (stats.byOp[op] ??= { messages: 0, bytes: 0 });
      o.bytes += bytes;
      if (toWorker) {
        o.messages++;
        stats.messages++;
      }
    },
    codec(ms: number): void {
      stats.codecMs += ms;
    },
    traffic: (): TrafficStats => structuredClone(stats),
    reset(): void {
      stats = blank();
    },
  };
}

/**
 * Worker groups in this process, reached through JSON messages with a byte counter.
 *
 * @example
 * const transport = inProcessTransport({ policy: await createWorkerGroup(...) });
 * await transport.call("policy", "state", {});
 */
export function inProcessTransport(workers: Readonly<Record<string, WorkerGroupApi>>): Transport {
  const meter = trafficMeter();
  const encode = (x: unknown, op: string, toWorker: boolean): unknown => {
    const t0 = performance.now();
    const json = JSON.stringify(x) ?? "null";
    const bytes = Buffer.byteLength(json, "utf8");
    const out = JSON.parse(json) as unknown;
    meter.codec(performance.now() - t0);
    meter.bytes(op, bytes, toWorker);
    return out;
  };
  return {
    async call(group, op, msg, opts) {
      const w = workers[group];
      if (!w)
        throw new MasoError("TRANSPORT_UNKNOWN_GROUP", `no worker group named "${group}"`, `known: ${Object.keys(workers).join(", ")}`);
      const req = encode(msg, op, true) as RequestOf<typeof op>;
      const handler = w[op] as (m: RequestOf<typeof op>, onText?: (d: string) => void) => Promise<ResponseOf<typeof op>>;
      // streamed text is data too: it crosses as strings, counted with the response
      const onText = opts?.onText && ((d: string) => opts.onText!(encode(d, op, false) as string));
      const res = await handler(req, onText);
      return encode(res, op, false) as ResponseOf<typeof op>;
    },
    groups: () => Object.keys(workers),
    traffic: meter.traffic,
    resetTraffic: meter.reset,
  };
}
