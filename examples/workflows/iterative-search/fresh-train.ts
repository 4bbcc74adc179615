// Iterative search (M-ASK) trained on a world the model has never read, evaluated on the reference
// world's dev and test splits exactly as workflow.ts. The reference train split is in models/base's
// pretraining text (every phrasing of its facts, its questions with answers), so models/base-qa's
// summarize copies a train document verbatim 3x as often as a test one (docs/notes/qa-workflows.md): RL on it
// rewards recall the test split cannot use. Here the training questions come from FRESH_WORLD_SEED's
// world and `retrieve` searches the episode's own world; graph, roles, rewards and metric are
// workflow.ts's. Configs: workflow.ts's baseQa variants with the fresh training split.
import type { QaTask } from "maso/envs";
import { FRESH_WORLD_SEED, freshWorldTasks, WORLD_SEED, worldRetrieveTool } from "../common/world-qa.js";
import {
  configs as referenceConfigs,
  initialState as referenceState,
  passagesOf,
  type RetrieveNode,
  searchWorkflow,
  tasks as reference,
} from "./workflow.js";

export { f1PerTurn, isStop, MAX_TURNS, metric, rewards, type State, taskId } from "./workflow.js";

const train = freshWorldTasks();
const freshIds = new Set(train.map((t) => t.id));

/** Training: every question of the fresh world; dev and test: the reference world's, unchanged. */
export const tasks = { train, dev: reference.dev, test: reference.test };

/** workflow.ts's state, with the world its retrieval searches. */
export const initialState = (task: QaTask) => ({ ...referenceState(task), world: freshIds.has(task.id) ? FRESH_WORLD_SEED : WORLD_SEED });

const ownWorld: RetrieveNode = (b) =>
  b.tool("retrieve", worldRetrieveTool, { input: (s) => ({ query: s.query, world: s.world ?? WORLD_SEED }), update: passagesOf });

export const workflow = searchWorkflow(undefined, ownWorld);

const fresh = <C extends { name: string }>(c: C): C => ({ ...c, name: `${c.name}-fresh` });

/** workflow.ts's models/base-qa configs, named apart (the data differ; the settings do not). */
export const configs = {
  baseQa: fresh(referenceConfigs.baseQa),
  baseQaPerRole: fresh(referenceConfigs.baseQaPerRole),
  baseQaPerRoleBig: fresh(referenceConfigs.baseQaPerRoleBig),
};

export const config = configs.baseQaPerRoleBig;
