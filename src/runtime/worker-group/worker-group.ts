// A worker group: owns one physical model — weights, adapters, value head, optimisers, generator
// and the sample cache — and implements WorkerGroupApi. Heavy tensors stay here; every method
// returns ids, text, scalars or metrics. It never calls the controller or another worker group.
// This file only wires the units: generation, sample-store, sample-rewards, logprob forwards, trainer, rate,
// and the weight version every cache of the model is checked against (weight-versions).
import type { Decoder } from "../../engine/model/decoder.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { resolveTrainerConfig, type TrainerOptions } from "../../rl/update/config.js";
import type { TrainerConfig } from "../../rl/update/types.js";
import type { LogprobInput } from "../../rl/update/forward-logprobs.js";
import {
  applySharedStep,
  type DataParallelPeers,
  type ForwardKind,
  type ForwardOutput,
  sharedForward,
  type SharedStep,
  type ShareRequest,
  type ShareResult,
} from "../../rl/update/data-parallel.js";
import { shareGradients } from "../../rl/update/ppo-update.js";
import { createUnits, type TrainUnit } from "../../rl/update/units.js";
import type { Generator } from "./generator.js";
import { createDefaultGenerator } from "./lanes/lane-generator.js";
import type { WorkerGroupApi, WorkerState } from "../protocol/messages.js";
import { loadModel, type ResolvedModelSpec } from "./models.js";
import { MasoError } from "../../errors.js";
import { generation } from "./generation.js";
import { type GenerationWeights, generationWeights } from "./generation-weights.js";
import { onKernelThreads } from "./kernel-threads.js";
import { rate } from "./rate.js";
import { assignRewards } from "./sample-rewards.js";
import { type SampleRecord, sampleStore } from "./sample-store.js";
import { frozenReference, type LogprobForwards, logprobForwards } from "./logprob-forwards.js";
import { trainer } from "./trainer.js";
import { type WeightVersions, weightVersions } from "./weight-versions.js";
import { type WorkerCounters, workerCounters } from "./worker-counters.js";
import { computeAdvantages, runAgentChains } from "./worker-advantages.js";

export { MAX_RATE_ITEMS } from "./rate.js";
export type { SampleRecord } from "./sample-store.js";

export interface WorkerGroupOptions {
  /** Roles this group serves and their adapters (from the cast). */
  roles: Readonly<Record<string, string | null>>;
  trainer?: TrainerOptions;
  /** Builds the sampler (default: KV-cache Samplers on generation lanes, createDefaultGenerator; createNaiveGenerator is the reference). */
  generator?: (model: Decoder, tokenizer: Tokenizer) => Generator;
  /**
   * Asynchronous RL (schedule.maxStaleness η ≥ 1): the most weight versions a trained sample may
   * lag. Generation then reads a copy of the weights pinned per rollout (generation-weights.ts)
   * while updates write the next version, and samples are kept per step. Absent: synchronous.
   */
  staleness?: number;
}

/** A worker group plus in-process handles for tests and checkpoints (never sent over a transport). */
export interface WorkerGroup extends WorkerGroupApi {
  readonly name: string;
  /** The engine model (in-process only: tests and checkpointing read it directly). */
  readonly model: Decoder;
  readonly tokenizer: Tokenizer;
  /** Trainable units and their AdamW optimisers (in-process only: checkpointing). */
  readonly units: ReadonlyMap<string, TrainUnit>;
  /** Updates run so far; it seeds minibatch shuffling, so a resumed run sets it back. */
  updates: number;
  /**
   * The model's weight version. Updates bump it; code that writes the weights from outside (a
   * checkpoint load, a weight sync) bumps it once the new weights are in place.
   */
  readonly weightVersions: WeightVersions;
  /** One cached sample's identity and token ids (a generation replica hands its samples to rank 0). */
  sampleRecord(id: number): SampleRecord | undefined;
  /** Caches a sample another replica of this model generated; returns its id here. */
  adoptSample(record: SampleRecord): number;
  /** Asynchronous RL: the kept weight versions generation pins (null: synchronous RL, or a frozen model). */
  readonly generationWeights: GenerationWeights | null;
  /** Asynchronous RL: the batch and last trained step of the latest pin (null: synchronous RL, or never pinned). */
  pinned(): { batch: number; trainedThrough: number } | null;
  /** Data-parallel updates over the model's ranks (the worker host wires them; data-parallel.ts). */
  readonly dataParallel: {
    /** Rank 0: the other ranks its updates share each minibatch with (null: none). */
    setPeers(peers: DataParallelPeers | null): void;
    /** A peer: forward and backward over its share of a minibatch. */
    share(req: ShareRequest): Promise<ShareResult>;
    /** A peer: one kind of log-prob forward over its share of the samples scoring needs. */
    forwards(kind: ForwardKind, samples: readonly LogprobInput[]): Promise<ForwardOutput[]>;
    /** A peer: the step with the summed gradients. */
    step(req: SharedStep): Promise<number>;
    /** A peer: the samples it scored and the minibatch shares it trained so far. */
    readonly shares: { scored: number; trained: number };
  };
}

/** A worker group's data-parallel side: rank 0's peers, and a peer's forwards, shares and steps. */
function dataParallelSide(
  model: Decoder,
  units: ReadonlyMap<string, TrainUnit>,
  cfg: TrainerConfig,
  forwards: LogprobForwards,
  timed: WorkerCounters["timed"],
): { handle: WorkerGroup["dataParallel"]; peers: () => DataParallelPeers | null } {
  let peers: DataParallelPeers | null = null;
  const shares = { scored: 0, trained: 0 };
  const handle: WorkerGroup["dataParallel"] = {
    setPeers: (p) => {
      peers = p;
    },
    forwards: (kind, samples) => {
      shares.scored += samples.length;
      return timed("logprobs", () => forwards.forward(kind, samples));
    },
    share: (req) => {
      shares.trained++;
      return timed("update", () => shareGradients(model, units, cfg, req));
    },
    get shares() {
      return { ...shares };
    },
    step: (req) => timed("update", () => applySharedStep(model, units, cfg, req)),
  };
  return { handle, peers: () => peers };
}

/**
 * Builds a worker group for one model: loads weights, adds one adapter per distinct adapter name in
 * `roles`, the value head and the reference, and sets up optimisers and the generator.
 *
 * @example
 * const wg = await createWorkerGroup(cast.models.get("base")!, { roles: { reasoner: "reasoner", actor: "actor" } });
 */
export async function createWorkerGroup(spec: ResolvedModelSpec, options: WorkerGroupOptions): Promise<WorkerGroup> {
  const { decoder: model, tokenizer, rewardHead } = await loadModel(spec);
  const adapters = [...new Set(Object.values(options.roles).filter((a): a is string => a !== null))];
  for (const a of adapters) if (!model.adapters.has(a)) model.addAdapter(a, spec.lora!);
  if (spec.valueHead && !model.valueHead) model.addValueHead(spec.valueHead.hidden, { detach: spec.valueHead.detach ?? true });
  const reference = frozenReference(model, spec);
  const cfg = resolveTrainerConfig(options.trainer);
  const units: Map<string, TrainUnit> = spec.train === "frozen" ? new Map() : createUnits(model, cfg);
  const asyncRl = options.staleness !== undefined;
  const pinnable = asyncRl && spec.train !== "frozen" ? generationWeights(model, spec.train === "full", 0) : null;
  pinnable?.keep(0);
  const generator = (options.generator ?? createDefaultGenerator)(pinnable?.model ?? model, tokenizer);
  let batch = 0;
  let trainedThrough = -1;
  let pinnedYet = false;

  const versions = weightVersions();
  versions.onBump((version, reason) => {
    if (reason !== "update") model.weightsWritten(); // AdamW tells the bf16 weight copies itself
    // shared prefixes were computed with the old weights; a pinned generation copy changes only when pinned
    if (pinnable) pinnable.keep(version);
    else generator.weightsChanged?.();
  });
  const store = sampleStore();
  const counters = workerCounters();
  const { timed } = counters;
  const forwards = logprobForwards(model, spec, reference, store);
  const dp = dataParallelSide(model, units, cfg, forwards, timed);
  const train = trainer({ spec, model, units, cfg, cache: store, forwards, versions, staleness: options.staleness, peers: dp.peers });
  const { generate, complete } = generation({
    model: spec.name,
    roles: options.roles,
    tokenizer,
    maxContext: model.config.maxPositionEmbeddings,
    generator,
    store,
    counters,
    versions,
    useRolloutLogp: cfg.oldLogProbs === "rollout" && !model.valueHead && !asyncRl,
    pinned: asyncRl ? () => ({ batch, trainedThrough }) : undefined,
  });

  return {
    name: spec.name,
    model,
    tokenizer,
    units,
    get updates() {
      return train.updates;
    },
    set updates(n: number) {
      train.updates = n;
    },
    weightVersions: versions,
    sampleRecord: (id) => store.record(id),
    adoptSample: (r) => store.adopt(r),
    generationWeights: pinnable,
    pinned: () => (pinnedYet ? { batch, trainedThrough } : null),
    dataParallel: dp.handle,
    generate: (req, onText) => generate(req, onText),
    complete: (req) => complete(req),
    rate: (req) => timed("rate", () => rate(model, rewardHead, tokenizer, counters, spec.name, req)),
    assignRewards: (req) => timed("rewards", () => assignRewards(store, req, spec.name)),
    computeLogprobs: (req) =>
      timed("logprobs", async () => {
        if (asyncRl) return { computed: onKernelThreads(1, () => forwards.fill(req.batch)) };
        const p = dp.peers();
        // a data-parallel model's ranks share the forwards like a minibatch
        return {
          computed: p ? await forwards.fillWith((k, s) => sharedForward(p, forwards.forward, k, s), req.batch) : forwards.fill(req.batch),
        };
      }),
    agentChains: (req) => timed("advantages", () => runAgentChains(req, store.get, cfg.kl)),
    computeAdvantages: (req) => timed("advantages", () => computeAdvantages(req, store.all(req.batch), spec.name, cfg.kl)),
    update: (req) => timed("update", () => train.update(req)),
    diagnostics: (req) => timed("diagnostics", () => train.diagnostics(req.roles, req.batch)),
    discard: async (req) => ({ discarded: req.ids.filter((id) => store.remove(id)).length }),
    release: async (req) => ({ released: store.clear(req?.batch) }),
    pin: async (req) => {
      if (!asyncRl)
        throw new MasoError(
          "WORKER_SYNC",
          `worker group "${spec.name}" was built for synchronous RL and cannot pin a weight version`,
          "build every worker group with the run's staleness (schedule.maxStaleness ≥ 1)",
        );
      if (pinnable?.pin(req.version ?? versions.current())) generator.weightsChanged?.();
      batch = req.batch;
      trainedThrough = req.trainedThrough;
      pinnedYet = true;
      return { version: pinnable?.version() ?? versions.current() };
    },
    state: async (): Promise<WorkerState> => {
      const gen = generator.stats();
      return {
        model: spec.name,
        roles: Object.keys(options.roles),
        adapters,
        cachedSamples: store.size(),
        samplesKept: store.added(),
        samplesDropped: store.dropped(),
        calls: structuredClone(counters.calls),
        busyMs: { ...counters.busyMs, generation: gen.busyMs },
        generator: gen,
        updates: train.updates,
      };
    },
  };
}
