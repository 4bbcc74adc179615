// A Generator that spreads requests over lanes: worker threads, each with its own Sampler on one
// kernel thread, all reading the model's weights in shared memory. Rollouts are many independent
// requests of small models, where one sampler on two kernel threads loses to fork/join overhead and
// two samplers on one thread each use both cores fully. A prompt goes to the lane that ran its
// longest prefix (prefix-routes.ts), where that prefix's KV blocks are, unless that lane is busier.
import type { Worker } from "node:worker_threads";
import type { SamplerOptions } from "../../../engine/generate/index.js";
import type { Decoder } from "../../../engine/model/decoder.js";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { MasoError, remoteError } from "../../../errors.js";
import { defaultThreads, envCount } from "../../../native/binding.js";
import { lastLevelCacheBytes } from "../../../native/cpu-cache.js";
import { startThread } from "../../../start-thread.js";
import type { Generator, GeneratorRequest, GeneratorResult } from "../generator.js";
import { createSamplerGenerator } from "../sampler-generator.js";
import { laneNice } from "./lane-priority.js";
import { blockKeys, PrefixRoutes } from "./prefix-routes.js";
import type { FromLane, LaneCounters, LaneData, LaneError, TokenizerSource, ToLane } from "./protocol.js";

interface Waiting {
  resolve: (r: GeneratorResult) => void;
  reject: (e: unknown) => void;
  onToken?: (token: number) => void;
}

interface Lane {
  index: number;
  thread: Worker;
  waiting: Map<number, Waiting>;
  counters: LaneCounters;
  /** why the lane is gone, once it is */
  lost: string | null;
  /** Fails the lane's waiting requests with `why` and takes it out of routing. */
  lose(why: string): void;
}

export interface LaneGeneratorOptions extends Omit<SamplerOptions, "tokenizer"> {
  /** Lanes (worker threads) to spread requests over; ≥ 1. */
  lanes: number;
}

/** The tokenizer as data a lane rebuilds it from, or null for one that cannot travel. */
export function tokenizerSource(tokenizer: Tokenizer): TokenizerSource | null {
  const t = tokenizer as Partial<{ kind: string; toJSON(): unknown; sourceFiles: Record<string, string> }>;
  if (t.kind === "maso-byte" && typeof t.toJSON === "function") return { kind: "maso-byte", json: t.toJSON() };
  if (t.kind === "hf" && t.sourceFiles) return { kind: "hf", files: t.sourceFiles };
  return null;
}

/** Requests in flight a lane may have beyond the least busy one and still get a prompt it has cached. */
const AFFINITY_SLACK = 4;

const laneError = (e: LaneError): Error => (e.code ? remoteError(e.code, e.message, e.hint) : new Error(e.message));

/**
 * Lanes start with the first request and cost nothing while idle (they never keep the process
 * alive). A lane that dies fails its own requests with LANE_LOST; the others carry on. Results
 * equal createSamplerGenerator's: sampling is seeded per request, independent of batching.
 * Throws LANE_TOKENIZER for a tokenizer that is neither maso's byte tokenizer nor an HF one.
 *
 * @example
 * const gen = createLaneGenerator(model, tokenizer, { lanes: 2 });
 */
export function createLaneGenerator(
  model: Decoder,
  tokenizer: Tokenizer,
  options: LaneGeneratorOptions,
): Generator & { close(): Promise<void> } {
  const { lanes: count, ...sampler } = options;
  if (!Number.isInteger(count) || count < 1) throw new MasoError("LANES", `lanes must be a positive integer, got ${count}`);
  const source = tokenizerSource(tokenizer);
  if (!source)
    throw new MasoError(
      "LANE_TOKENIZER",
      "this tokenizer cannot be sent to a generation lane",
      "use one lane (createSamplerGenerator) for a custom tokenizer",
    );
  const data: LaneData = {
    config: model.config,
    base: model.params.data,
    adapters: [...model.adapters.values()].map((a) => ({ name: a.name, lora: a.lora, params: a.params.data })),
    tokenizer: source,
    sampler,
    nice: laneNice(),
  };
  for (const d of [data.base, ...data.adapters.map((a) => a.params)])
    if (!(d.buffer instanceof SharedArrayBuffer))
      throw new MasoError(
        "LANE_MEMORY",
        "generation lanes need the model's weights in shared memory",
        "build parameter tables without a `data` argument",
      );
  let lanes: Lane[] | null = null;
  let closed = false;
  let nextId = 0;
  let requests = 0;
  const routes = new PrefixRoutes();

  const start = (index: number): Lane => {
    const thread = startThread(import.meta.url, "./lane-thread", data);
    const lane: Lane = {
      index,
      thread,
      waiting: new Map(),
      counters: { steps: 0, decodeTokens: 0, busyMs: 0 },
      lost: null,
      lose(why) {
        if (lane.lost) return;
        lane.lost = why;
        for (const w of lane.waiting.values())
          w.reject(new MasoError("LANE_LOST", `generation lane ${index} stopped: ${why}`, "see the error above; other lanes carry on"));
        lane.waiting.clear();
        thread.unref();
      },
    };
    thread.unref();
    thread.on("message", (m: FromLane) => {
      const w = lane.waiting.get(m.id);
      if (!w) return;
      if (m.kind === "tokens") {
        for (const t of m.tokens) w.onToken?.(t);
        return;
      }
      lane.waiting.delete(m.id);
      lane.counters = m.counters;
      if (lane.waiting.size === 0) thread.unref();
      if (m.kind === "result") w.resolve(m.result);
      else w.reject(laneError(m.error));
    });
    thread.on("error", (e) => lane.lose(e.message));
    thread.on("exit", (code) => lane.lose(`exit code ${code}`));
    return lane;
  };

  /**
   * The live lane that ran the longest prefix of this prompt, unless it has more than
   * {@link AFFINITY_SLACK} requests in flight beyond the least busy lane, which it gets then.
   */
  const pick = (request: GeneratorRequest): Lane => {
    if (closed) throw new MasoError("GENERATOR_CLOSED", "this generator was closed");
    lanes ??= Array.from({ length: count }, (_, i) => start(i));
    const live = lanes.filter((l) => !l.lost);
    if (live.length === 0) throw new MasoError("LANE_LOST", `every generation lane stopped (${lanes[0].lost})`, "see the errors above");
    const least = live.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a));
    const keys = blockKeys(request.adapter, request.promptTokens);
    const warm = routes.match(keys);
    const lane = warm ? lanes[warm.lane] : null;
    const chosen = lane && !lane.lost && lane.waiting.size <= least.waiting.size + AFFINITY_SLACK ? lane : least;
    routes.record(keys, chosen.index);
    return chosen;
  };

  return {
    submit(request, onToken) {
      requests++;
      return new Promise<GeneratorResult>((resolve, reject) => {
        const lane = pick(request);
        const id = nextId++;
        lane.waiting.set(id, { resolve, reject, ...(onToken && { onToken }) });
        lane.thread.ref();
        const stream = onToken !== undefined;
        lane.thread.postMessage({ kind: "submit", id, request, precision: model.precision, stream } satisfies ToLane);
      });
    },
    stats() {
      const all = (lanes ?? []).map((l) => l.counters);
      const sum = (f: (c: LaneCounters) => number) => all.reduce((s, c) => s + f(c), 0);
      return { requests, steps: sum((c) => c.steps), sequenceSteps: sum((c) => c.decodeTokens), busyMs: sum((c) => c.busyMs) };
    },
    weightsChanged() {
      routes.clear();
      for (const l of lanes ?? []) if (!l.lost) l.thread.postMessage({ kind: "weightsChanged" } satisfies ToLane);
    },
    async close() {
      closed = true;
      for (const l of lanes ?? []) l.lose("the generator was closed");
      await Promise.all((lanes ?? []).map((l) => l.thread.terminate()));
    },
  };
}

/**
 * Generation lanes for `model`: MASO_LANES if set; else one per kernel thread (MASO_THREADS or
 * every core) when the weights a decode step reads fit in the CPU's last-level cache, and one
 * otherwise. Each lane reads every weight once per step for its own share of the batch: from cache
 * that is cheap, but weights streamed from memory are better read once for the whole batch by one
 * sampler whose kernels use every thread.
 */
export function defaultLanes(model: Decoder): number {
  const weightBytes = model.params.data.byteLength * (model.precision === "bf16" ? 0.5 : 1);
  return envCount("MASO_LANES") ?? lanesFor(weightBytes, lastLevelCacheBytes(), defaultThreads());
}

/** One lane per thread for weights that fit in the cache, else one. */
export const lanesFor = (weightBytes: number, cacheBytes: number, threads: number): number => (weightBytes <= cacheBytes ? threads : 1);

/**
 * A worker group's generator: lanes when there are several and the tokenizer can travel to them,
 * else the KV-cache Sampler on this thread.
 */
export function createDefaultGenerator(model: Decoder, tokenizer: Tokenizer): Generator {
  const lanes = defaultLanes(model);
  return lanes > 1 && tokenizerSource(tokenizer)
    ? createLaneGenerator(model, tokenizer, { lanes })
    : createSamplerGenerator(model, tokenizer);
}
