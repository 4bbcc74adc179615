// Shared setup of the three world-QA reference workflows (qd-retrieve-answer, retrieve-extract-answer,
// iterative-search): the synthetic world's tasks, the BM25 retriever tool over its documents, the
// F1 metric and the run configs (three cast shapes). Roles, graphs and rewards live in each module.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineTool, type Trajectory } from "maso";
import { contentHash, f1Score, makeWorldTasks, openRetriever, type QaTask, type Retriever, type WorldTasks } from "maso/envs";
import { type CastShape, castModels } from "./cast-shapes.js";

/** The world every reference QA workflow trains and evaluates on (the base model was pretrained on seed 42). */
export const WORLD_SEED = 42;

const worlds = new Map<number, WorldTasks>();

/** World `seed`'s tasks and documents, generated once per process. */
function worldOf(seed: number): WorldTasks {
  let w = worlds.get(seed);
  if (!w) worlds.set(seed, (w = makeWorldTasks(seed)));
  return w;
}

const world = worldOf(WORLD_SEED);

/** train / dev (checkpoint selection, in-training eval) / test (`maso eval` only): whole clusters, no entity leaks. */
export const tasks: { train: QaTask[]; dev: QaTask[]; test: QaTask[] } = world.splits;

/**
 * A second world (same generator, no entity name or name word in common with the reference world)
 * that neither models/base nor models/base-qa has read: questions to train on whose documents the
 * model must copy rather than recall. The reference world's train facts and train questions are in
 * models/base's pretraining text, so its train split is partly memorised (docs/notes/qa-workflows.md).
 */
export const FRESH_WORLD_SEED = 7;

/** Every question of the fresh world (all three of its splits), ids prefixed so they never meet a reference id. */
export const freshWorldTasks = (): QaTask[] => {
  const { train, dev, test } = worldOf(FRESH_WORLD_SEED).splits;
  return [...train, ...dev, ...test].map((t) => ({ ...t, id: `w${FRESH_WORLD_SEED}-${t.id}` }));
};

/** Passages the retriever returns per query (the papers' top-k). */
export const TOP_K = 4;

/**
 * A world's BM25 index file: one per collection (named by its content hash) under the OS temp dir,
 * built on first use and reused by every later run and process (buildIndex writes atomically).
 */
const indexFileOf = (seed: number): string =>
  join(tmpdir(), "maso-retriever", `world-${seed}-${contentHash(worldOf(seed).docs).slice(0, 16)}.bm25`);

/** The reference world's index file. */
export const INDEX_FILE = indexFileOf(WORLD_SEED);

const opened = new Map<number, Retriever>();

/** The retriever over world `seed`'s documents (default: the reference world), opened (or built) lazily so `--check` stays instant. */
export function retriever(seed: number = WORLD_SEED): Retriever {
  let r = opened.get(seed);
  if (!r) opened.set(seed, (r = openRetriever(indexFileOf(seed), { docs: worldOf(seed).docs, onStale: "rebuild" })));
  return r;
}

/** The texts of the top-k passages for `query` in world `seed`. */
export const topPassagesIn = (seed: number, query: string): string[] =>
  retriever(seed)
    .search(query, TOP_K)
    .map((h) => h.text);

/** The texts of the top-k passages for `query` in the reference world: what the retriever tool returns. */
export const topPassages = (query: string): string[] => topPassagesIn(WORLD_SEED, query);

/** The retriever tool: a query in, the texts of its top-k passages out. */
export const retrieveTool = defineTool<string, string[]>({ name: "retriever", run: topPassages });

/** A query and the world whose documents answer it. */
export interface WorldQuery {
  query: string;
  world: number;
}

/** The retriever tool of a workflow whose tasks come from more than one world. */
export const worldRetrieveTool = defineTool<WorldQuery, string[]>({ name: "retriever", run: (q) => topPassagesIn(q.world, q.query) });

/** The passages of a fan-out's retrieval branches, in branch order, without repeats; failed calls (`{ error }`) add nothing. */
export function mergePassages(branchOutputs: readonly unknown[] | undefined): string[] {
  const texts = (branchOutputs ?? []).flatMap((o) => (Array.isArray(o) ? (o as string[]) : []));
  return [...new Set(texts)];
}

/** What every world-QA state carries: the question, its gold answers (for `metrics`) and the final answer. */
export interface QaState {
  question: string;
  gold: string[];
  answer: string;
}

/** Group-baseline key and log name of a task. */
export const taskId = (task: QaTask): string => task.id;

/** Token F1 of a predicted answer against the task's gold answers. */
export const answerF1 = (answer: string, task: QaTask): number => f1Score(answer, task.answers);

/** Held-out score (`eval.metric`, `maso eval`): F1 of the episode's final answer. */
export const metric = (t: Trajectory<QaState>, task: QaTask): number => answerF1(t.finalState.answer, task);

/** Per-episode figures logged under `episodes.metrics` (the workflow's `metrics` option). */
export const qaMetrics = (s: QaState): Record<string, number> => ({ f1: f1Score(s.answer, s.gold) });

/** The committed pretrained base checkpoint (models/base), absolute so runs work from any directory. */
export const BASE_MODEL_DIR = fileURLToPath(new URL("../../../models/base", import.meta.url));

/**
 * models/base trained further to copy retrieved documents in the workflows' own prompt shapes
 * (docs/base-model.md, "models/base-qa"); the `baseQa` configs start from it.
 */
export const QA_MODEL_DIR = fileURLToPath(new URL("../../../models/base-qa", import.meta.url));

/** The frozen QA judge (recipes/base-model/build-judge.ts): question, gold and a candidate answer → `<score>F1</score>`. */
export const JUDGE_MODEL_DIR = fileURLToPath(new URL("../../../models/judge-qa", import.meta.url));

// Full fine-tuning moves every weight, so it takes a 10x smaller step than a LoRA adapter. Starting
// points for the 2.4M-parameter base, not tuned values.
const LEARNING_RATES = { lora: 1e-3, full: 1e-4 };

/**
 * The run config of a world-QA workflow (docs/config.md): the base checkpoint cast by `shape`, RLOO
 * (leave-one-out baseline per (task, role, turn), no std division), 8 episodes per task, 4 tasks per
 * step, 50 steps. A malformed output costs 0.1 (`rewardWeights.format`), a tenth of a correct answer
 * (a −1 format term on a 0–1 F1 scale dominates early training; with GRPO's per-group std
 * division, groups whose F1 is all 0 — most of them — taught only format). Measured on QD-Retrieve-Answer
 * (150 steps, docs/RESULTS.md) this is no better on test F1 than GRPO with −1: both stay at the start.
 * `checkpoint` is the model every role starts from (models/base by default).
 * @example qaConfig("qd-retrieve-answer", ["decompose", "answer"], "shared")
 */
export function qaConfig(name: string, roles: readonly string[], shape: CastShape = "lora", checkpoint = BASE_MODEL_DIR) {
  const suffix = [shape === "lora" ? "" : `-${shape}`, checkpoint === QA_MODEL_DIR ? "-base-qa" : ""].join("");
  return {
    name: `${name}${suffix}`,
    seed: 0,
    ...castModels(roles, shape, checkpoint, LEARNING_RATES),
    algorithm: { estimator: "rloo", groupSize: 8, groupBy: ["task", "role", "turn"], normalize: "none", minibatchSize: 32, epochs: 1 },
    schedule: { steps: 50, tasksPerStep: 4, concurrency: 32 },
    rewardWeights: { format: 0.1 },
    checkpoint: { every: 10, keep: 2 },
    eval: { every: 10, episodes: 64 },
  };
}

/**
 * `cfg` with 8 tasks (64 episodes) per step, every model's optimiser at `lr`, dev read every 5 steps:
 * at 4 tasks per step the sampled F1 swings with the questions drawn and the greedy policy with it.
 * @example bigBatchConfig(qaConfig("iterative-search", roles, "perRole", QA_MODEL_DIR), 5e-5)
 */
export function bigBatchConfig(cfg: ReturnType<typeof qaConfig>, lr: number) {
  const models = Object.fromEntries(Object.entries(cfg.models).map(([k, m]) => [k, { ...m, optimizer: { ...m.optimizer, lr } }]));
  return {
    ...cfg,
    name: `${cfg.name}-big`,
    models,
    schedule: { ...cfg.schedule, tasksPerStep: 8, concurrency: 64 },
    eval: { ...cfg.eval, every: 5 },
  };
}

/**
 * `cfg` with every role's rollouts sampled at `temperature` (evaluation stays greedy); its other
 * sampling settings stay.
 * @example rolloutTemperature(configs.baseQaPerRoleBig, 0.6)
 */
export function rolloutTemperature<C extends { name: string; sampling?: object }>(cfg: C, temperature: number) {
  return { ...cfg, name: `${cfg.name}-t${temperature}`, sampling: { ...cfg.sampling, temperature } };
}
