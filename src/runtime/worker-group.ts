// A worker group: owns one physical model — weights, adapters, value head, optimisers, generator
// and the sample cache — and implements WorkerGroupApi. Heavy tensors stay here; every method
// returns ids, text, scalars or metrics. It never calls the controller or another worker group.
import { Decoder } from "../engine/model/decoder.js";
import { createRng } from "../rng.js";
import { chatPromptIds } from "../engine/tokenizer/chain-prompt.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";
import { MasoError } from "../errors.js";
import { actionLogRatios, happoKey } from "../rl/advantages/happo.js";
import { concat } from "../rl/concat.js";
import { resolveTrainerConfig, type TrainerOptions } from "../rl/update/config.js";
import { klTerm } from "../rl/kl-estimators.js";
import { ppoUpdate } from "../rl/update/ppo-update.js";
import { scoreSamples } from "../rl/update/score.js";
import { rewardIds, rewardScores } from "../rl/reward-model/score.js";
import { createUnits, scheduleUnits, type TrainUnit } from "../rl/update/units.js";
import type { Generator, GeneratorRequest, GeneratorResult } from "./generator.js";
import type {
  CompleteRequest,
  CompleteResponse,
  GenerateRequest,
  GenerateResponse,
  LogRatio,
  RateRequest,
  RateResponse,
  RewardItem,
  UpdateRequest,
  UpdateResponse,
  WorkerGroupApi,
  WorkerState,
} from "./messages.js";
import type { OutputLogprob } from "../workflow/role-call.js";
import { loadModel, type ResolvedModelSpec } from "./models.js";
import { createDefaultGenerator } from "./lanes/lane-generator.js";
import { type CachedSample, sampleCache, toTrainSample } from "./sample-cache.js";
import { fewestTokens, longestTokenChars } from "../engine/tokenizer/prompt-bound.js";
import { textStream } from "./text-stream.js";
import { computeAdvantages, runAgentChains } from "./worker-advantages.js";

export interface WorkerGroupOptions {
  /** Roles this group serves and their adapters (from the cast). */
  roles: Readonly<Record<string, string | null>>;
  trainer?: TrainerOptions;
  /** Builds the sampler (default: KV-cache Samplers on generation lanes, createDefaultGenerator; createNaiveGenerator is the reference). */
  generator?: (model: Decoder, tokenizer: Tokenizer) => Generator;
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
  /** One cached sample's identity and token ids (a generation replica hands its samples to rank 0). */
  sampleRecord(id: number): SampleRecord | undefined;
  /** Caches a sample another replica of this model generated; returns its id here. */
  adoptSample(record: SampleRecord): number;
  /** Tells the generator the weights were replaced from outside (a replica after a weight sync). */
  weightsChanged(): void;
}

/** What identifies a generated sample and its tokens: everything scoring and training read later. */
export type SampleRecord = Pick<CachedSample, "role" | "episode" | "node" | "visit" | "turn" | "adapter" | "temperature" | "promptLen"> & {
  tokens: number[];
};

/**
 * Each output token's text and the log-prob it was sampled with (a terminating stop id has no text),
 * and its alternatives' texts and log-probs where the generator returned them.
 */
function tokenLogprobs(tokenizer: Tokenizer, out: GeneratorResult): OutputLogprob[] {
  const text = (id: number) => tokenizer.decode([id], { skipSpecialTokens: true });
  return out.tokens.map((t, i) => {
    const top = out.topLogprobs?.[i];
    return {
      token: text(t),
      logprob: out.logprobs[i],
      ...(top && { top: top.map((a) => ({ token: text(a.token), logprob: a.logprob })) }),
    };
  });
}

/** Most (prompt, response) pairs one `rate` call scores (bounds a message and its forward). */
export const MAX_RATE_ITEMS = 4096;

/** The cached sample a reward item may go to: it exists, is the claimed episode's and role's, and has no reward yet. */
function checkedTarget(item: RewardItem, s: CachedSample | undefined, group: string): CachedSample {
  if (!s)
    throw new MasoError("SAMPLE_UNKNOWN", `assignRewards: worker group "${group}" has no sample ${item.id}`, "send handles from this step");
  if (s.episode !== item.episodeId || s.role !== item.role)
    throw new MasoError(
      "SAMPLE_OWNER",
      `assignRewards: sample ${item.id} of worker group "${group}" was generated for episode "${s.episode}" role "${s.role}", but its reward claims episode "${item.episodeId}" role "${item.role}"`,
      "match rewards to samples through the controller's record of role calls, never through handles read back from trajectories",
    );
  if (s.reward !== null) throw twice(item, s, group);
  if (Array.isArray(item.reward) && item.reward.length !== s.tokens.length - s.promptLen)
    throw new MasoError(
      "REWARD_SHAPE",
      `sample ${item.id}: ${item.reward.length} token rewards for ${s.tokens.length - s.promptLen} tokens`,
      "one value per output token",
    );
  return s;
}

const twice = (item: RewardItem, s: CachedSample, group: string): MasoError =>
  new MasoError(
    "SAMPLE_REWARDED_TWICE",
    `assignRewards: sample ${item.id} of worker group "${group}" (episode "${s.episode}", role "${s.role}") got a second reward this step, claimed for episode "${item.episodeId}" role "${item.role}"`,
    "send one reward per sample per step",
  );

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
  const reference = spec.reference === "frozen-copy" ? new Decoder(model.config, model.params.zerosLike(), { trainBase: false }) : null;
  reference?.params.data.set(model.params.data);
  if (reference) reference.precision = model.precision;
  const cfg = resolveTrainerConfig(options.trainer);
  const units: Map<string, TrainUnit> = spec.train === "frozen" ? new Map() : createUnits(model, cfg);
  const generator = (options.generator ?? createDefaultGenerator)(model, tokenizer);
  const maxContext = model.config.maxPositionEmbeddings;
  const cache = sampleCache();
  const calls: Record<string, Record<string, number>> = {};
  const busyMs: Record<string, number> = {};
  let updates = 0;
  const timed = async <T>(op: string, f: () => T | Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      busyMs[op] = (busyMs[op] ?? 0) + performance.now() - t0;
    }
  };

  /**
   * Counts weight changes (updates, checkpoint loads, weight syncs): a sample's rollout log-probs
   * stand for its old log-probs only if no change fell between its generation's start and end.
   */
  let weightsVersion = 0;
  const useRolloutLogp = cfg.oldLogProbs === "rollout" && !model.valueHead;

  /**
   * Old log-probs and values of samples that lack them, then reference log-probs of samples that
   * lack those, in a few packed forwards each; returns how many samples it scored.
   */
  const score = (): number => {
    const all = cache.all();
    const needOld = all.filter((s) => s.oldLogp === null);
    if (needOld.length > 0) {
      const cur = scoreSamples(model, needOld, { values: model.valueHead !== null });
      needOld.forEach((s, i) => {
        s.oldLogp = cur[i].logp;
        s.oldValues = cur[i].values;
      });
    }
    const needRef = spec.reference === "adapter-off" || reference ? all.filter((s) => s.refLogp === null) : [];
    if (spec.reference === "adapter-off") {
      const withAdapter = needRef.filter((s) => s.adapter !== null);
      const ref = withAdapter.length ? scoreSamples(model, withAdapter, { adapterOff: true }) : [];
      withAdapter.forEach((s, i) => {
        s.refLogp = ref[i].logp;
      });
      for (const s of needRef) if (s.adapter === null) s.refLogp = s.oldLogp; // the base is the reference
    } else if (reference && needRef.length > 0) {
      const ref = scoreSamples(reference, needRef);
      needRef.forEach((s, i) => {
        s.refLogp = ref[i].logp;
      });
    }
    return new Set([...needOld, ...needRef]).size;
  };

  /** The generation's log-probs as old log-probs, or null where a scoring forward must supply them. */
  const rolloutLogp = (out: GeneratorResult, versionAtStart: number): Float32Array | null => {
    if (!useRolloutLogp || weightsVersion !== versionAtStart) return null;
    if (out.logprobs.length !== out.tokens.length || !out.logprobs.every(Number.isFinite)) return null;
    return Float32Array.from(out.logprobs);
  };

  const metaOf = (s: CachedSample) => ({
    episode: s.episode,
    role: s.role,
    model: spec.name,
    task: s.groupKey ?? "",
    turn: s.turn,
    reward: 0,
  });
  const rewarded = (roles?: readonly string[]) =>
    cache.all().filter((s) => s.reward !== null && s.advantages !== null && (!roles || roles.includes(s.role)));

  const cacheSample = (r: Omit<SampleRecord, "tokens"> & { tokens: Int32Array; oldLogp?: Float32Array | null }) =>
    cache.add({
      ...r,
      oldLogp: r.oldLogp ?? null,
      refLogp: null,
      oldValues: null,
      reward: null,
      tokenRewards: null,
      groupKey: null,
      rawAdvantages: null,
      rawReturns: null,
      advantages: null,
      returns: null,
    });

  /** The generator request of a role call or a completion: its prompt ids, sampling, stops and seed. */
  const submission = (
    prompt: number[],
    req: Pick<GenerateRequest, "sampling" | "stop" | "seed">,
    adapter: string | null,
    maxNewTokens: number,
  ): GeneratorRequest => ({
    promptTokens: prompt,
    adapter,
    maxNewTokens,
    temperature: req.sampling.temperature,
    topP: req.sampling.topP,
    topK: req.sampling.topK,
    stopTokenIds: tokenizer.eosTokenIds,
    stop: req.stop,
    seed: req.seed,
  });
  /** At most `asked` new tokens, and no more than the context leaves after the prompt. */
  const fitted = (prompt: readonly number[], asked: number) => Math.max(1, Math.min(asked, maxContext - prompt.length));

  const generate = async (req: GenerateRequest, onText?: (delta: string) => void): Promise<GenerateResponse> => {
    const expected = options.roles[req.role];
    if (expected === undefined)
      throw new MasoError(
        "WORKER_ROLE",
        `worker group "${spec.name}" does not serve role "${req.role}"`,
        `it serves ${Object.keys(options.roles).join(", ")}`,
      );
    if (expected !== req.adapter)
      throw new MasoError(
        "WORKER_ADAPTER",
        `role "${req.role}" asked for adapter ${String(req.adapter)}, the cast says ${String(expected)}`,
        "route through the cast",
      );
    const { prompt, chained } = promptIds(req);
    const versionAtStart = weightsVersion;
    const stream = onText ? textStream(tokenizer, req.stop, onText) : undefined;
    const out = await generator.submit(
      {
        ...submission(prompt, req, req.adapter, req.fitContext ? fitted(prompt, req.maxNewTokens) : req.maxNewTokens),
        ...(req.logprobs && req.topLogprobs && { topLogprobs: req.topLogprobs }),
      },
      stream && ((t) => stream.push(t)),
    );
    stream?.end(out.text);
    const byRole = (calls[req.role] ??= {});
    byRole[req.adapter ?? "-"] = (byRole[req.adapter ?? "-"] ?? 0) + 1;
    const s = cacheSample({
      role: req.role,
      episode: req.episodeId,
      node: req.node,
      visit: req.visit,
      turn: req.turn,
      adapter: req.adapter,
      temperature: req.sampling.temperature,
      tokens: Int32Array.from([...prompt, ...out.tokens]),
      promptLen: prompt.length,
      oldLogp: rolloutLogp(out, versionAtStart),
    });
    return {
      text: out.text,
      sampleHandle: { model: spec.name, id: s.id },
      promptTokens: prompt.length,
      outputTokens: out.tokens.length,
      finishReason: out.finishReason,
      ...(req.extend && { chained }),
      ...(req.logprobs && { logprobs: tokenLogprobs(tokenizer, out) }),
    };
  };

  /** A generation on the base weights whose sample is not kept: nothing of it can train. */
  const complete = async (req: CompleteRequest): Promise<CompleteResponse> => {
    const { prompt } = promptIds({ ...req, adapter: null } as GenerateRequest);
    const out = await generator.submit(submission(prompt, req, null, fitted(prompt, req.maxNewTokens)));
    const byUse = (calls["(complete)"] ??= {});
    byUse["-"] = (byUse["-"] ?? 0) + 1;
    return { text: out.text, promptTokens: prompt.length, outputTokens: out.tokens.length, finishReason: out.finishReason };
  };

  /**
   * Reward-head scores of (prompt, response) pairs, in order, in packed forwards. Each text is cut
   * to the model's context from the left of its prompt (then of its response), as training did.
   */
  const rate = (req: RateRequest): RateResponse => {
    if (!rewardHead)
      throw new MasoError(
        "REWARD_HEAD_MISSING",
        `model "${spec.name}" has no reward head`,
        "point models.<name>.weights at a directory written by `maso rm train`",
      );
    if (!Array.isArray(req.items) || req.items.length > MAX_RATE_ITEMS)
      throw new MasoError(
        "RATE_TOO_MANY",
        `rate: ${req.items?.length} items, at most ${MAX_RATE_ITEMS} a call`,
        "send the items in several calls",
      );
    if (req.items.length === 0) return { scores: [] };
    const ids = req.items.map((item) => rewardIds(tokenizer, item, maxContext).ids);
    const byUse = (calls["(rate)"] ??= {});
    byUse["-"] = (byUse["-"] ?? 0) + req.items.length;
    return { scores: [...rewardScores(model, rewardHead, ids)] };
  };

  /** A request's prompt ids; a chat that continues one of this episode's samples reuses its ids exactly. */
  const promptIds = (req: GenerateRequest): { prompt: number[]; chained: boolean } => {
    // a prompt that can never fit is refused before the seconds its encoding would block this thread
    const least = req.messages ? fewestTokens(tokenizer, req.messages) : Math.ceil(req.prompt.length / longestTokenChars(tokenizer));
    if (least >= maxContext)
      throw new MasoError(
        "CONTEXT_TOO_LONG",
        `the prompt needs at least ${least} tokens; the model's context is ${maxContext}`,
        "truncate the prompt (oldest history first)",
      );
    if (!req.messages) return { prompt: tokenizer.encode(req.prompt, { addSpecialTokens: false }), chained: false };
    const opts = { ...(req.chatTemplate && { variables: req.chatTemplate }), ...(req.tools && { tools: [...req.tools] }) };
    const earlier = req.extend ? cache.get(req.extend.id) : undefined;
    const prev =
      req.extend && earlier && earlier.episode === req.episodeId
        ? {
            replayed: req.extend.replayed,
            promptIds: earlier.tokens.subarray(0, earlier.promptLen),
            outputIds: earlier.tokens.subarray(earlier.promptLen),
          }
        : undefined;
    const { ids, chained } = chatPromptIds(tokenizer, req.messages, opts, prev);
    return { prompt: ids, chained };
  };

  const update = (req: UpdateRequest): UpdateResponse => {
    if (spec.train === "frozen")
      throw new MasoError("MODEL_FROZEN", `model "${spec.name}" is frozen`, "set train: 'full' or 'lora' to update it");
    const samples = rewarded(req.roles);
    const factor = (s: CachedSample) => (req.happo ? (req.happo.factors[happoKey(metaOf(s), req.happo.by)] ?? 1) : 1);
    const train = samples.map((s) => toTrainSample(s, factor(s)));
    scheduleUnits(units.values(), cfg, req.step ?? updates);
    const report = ppoUpdate(model, units, cfg, train, { policy: req.policy, critic: req.critic }, createRng(cfg.seed + 7919 * updates++));
    weightsVersion++;
    generator.weightsChanged?.();
    if (!req.returnLogRatios) return { report };
    const after = scoreSamples(model, samples);
    const offsets = [0];
    for (const s of samples) offsets.push(offsets[offsets.length - 1] + s.oldLogp!.length);
    const ratios = actionLogRatios(
      { offsets, mask: new Uint8Array(offsets[offsets.length - 1]).fill(1) },
      concat(after.map((a) => a.logp)),
      concat(samples.map((s) => s.oldLogp!)),
    );
    const logRatios: LogRatio[] = samples.map((s, i) => ({ episode: s.episode, turn: s.turn, logRatio: ratios[i] }));
    return { report, logRatios };
  };

  const diagnostics = (roles?: readonly string[]) => {
    const mine = cache.all().filter((s) => s.refLogp !== null && (!roles || roles.includes(s.role)));
    const cur = scoreSamples(model, mine);
    const refNow =
      spec.reference === "adapter-off" ? scoreSamples(model, mine, { adapterOff: true }) : reference ? scoreSamples(reference, mine) : cur;
    const out: Record<string, { samples: number; klRef: number; refDrift: number }> = {};
    mine.forEach((s, i) => {
      const o = (out[s.role] ??= { samples: 0, klRef: 0, refDrift: 0 });
      o.samples++;
      let kl = 0;
      for (let t = 0; t < cur[i].logp.length; t++) {
        kl += klTerm(cur[i].logp[t], s.refLogp![t], "k3")[0];
        o.refDrift = Math.max(o.refDrift, Math.abs(refNow[i].logp[t] - s.refLogp![t]));
      }
      o.klRef += kl / Math.max(cur[i].logp.length, 1);
    });
    for (const o of Object.values(out)) o.klRef /= o.samples;
    return { roles: out };
  };

  return {
    name: spec.name,
    model,
    tokenizer,
    units,
    get updates() {
      return updates;
    },
    set updates(n: number) {
      updates = n;
      weightsVersion++; // set by a checkpoint load, which rewrites the weights too
    },
    sampleRecord(id) {
      const s = cache.get(id);
      if (!s) return undefined;
      const { role, episode, node, visit, turn, adapter, temperature, promptLen } = s;
      return { role, episode, node, visit, turn, adapter, temperature, promptLen, tokens: [...s.tokens] };
    },
    adoptSample: (r) => cacheSample({ ...r, tokens: Int32Array.from(r.tokens) }).id,
    weightsChanged: () => {
      weightsVersion++;
      generator.weightsChanged?.();
    },
    generate: (req, onText) => generate(req, onText),
    complete: (req) => complete(req),
    rate: (req) => timed("rate", () => rate(req)),
    assignRewards: (req) =>
      timed("rewards", () => {
        // every item is checked before any is applied, so a refused message changes nothing
        const targets = req.items.map((item) => checkedTarget(item, cache.get(item.id), spec.name));
        const seen = new Map<number, RewardItem>();
        for (const item of req.items) {
          const first = seen.get(item.id);
          if (first) throw twice(item, targets[req.items.indexOf(first)], spec.name);
          seen.set(item.id, item);
        }
        req.items.forEach((item, i) => {
          const s = targets[i];
          if (Array.isArray(item.reward)) {
            s.tokenRewards = Float32Array.from(item.reward);
            s.reward = 0;
          } else s.reward = item.reward;
          s.groupKey = item.groupKey;
        });
        return { accepted: req.items.length };
      }),
    score: () => timed("score", () => ({ scored: score() })),
    agentChains: (req) => timed("advantages", () => runAgentChains(req, cache.get, cfg.kl)),
    computeAdvantages: (req) => timed("advantages", () => computeAdvantages(req, cache.all(), spec.name, cfg.kl)),
    update: (req) => timed("update", () => update(req)),
    diagnostics: (req) => timed("diagnostics", () => diagnostics(req.roles)),
    discard: async (req) => ({ discarded: req.ids.filter((id) => cache.remove(id)).length }),
    release: async () => ({ released: cache.clear() }),
    state: async (): Promise<WorkerState> => {
      const gen = generator.stats();
      return {
        model: spec.name,
        roles: Object.keys(options.roles),
        adapters: adapters,
        cachedSamples: cache.size(),
        calls: structuredClone(calls),
        busyMs: { ...busyMs, generation: gen.busyMs },
        generator: gen,
        updates,
      };
    },
  };
}
