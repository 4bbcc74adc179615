// Runs a world-QA workflow module's own config for a few RL steps in-process, with one change: every
// model is a fresh tiny decoder (the engine's `tiny` preset) on the base checkpoint's tokenizer, so a
// step takes about a second while the prompts are exactly the ones the real base model sees.
import { join } from "node:path";
import type { WorkflowModule } from "../../src/cli/train/workflow-module.js";
import { runtimeOptions } from "../../src/cli/train/runtime-options.js";
import { workflowRoles } from "../../src/cli/commands/train.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { presetConfig } from "../../src/config/model-presets.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { runTraining, type TrainRunResult } from "../../src/runtime/train-run.js";
import { BASE_CHECKPOINT } from "../../examples/workflows/world-qa.js";

/** A workflow module as the world-QA examples export it (config included). */
export type QaModule = Required<Pick<WorkflowModule, "taskId" | "metric">> &
  WorkflowModule & { config: Record<string, unknown> & { algorithm: object } };

/**
 * `steps` RL steps of `mod` (2 tasks × 2 episodes each, greedy eval on 2 dev tasks at the end).
 * @example const { rows } = await trainTiny(qd, join(root, "qd"));
 */
export async function trainTiny(mod: QaModule, root: string, steps = 2): Promise<TrainRunResult> {
  const runDir = join(root, mod.workflow.name);
  const raw = {
    ...mod.config,
    runDir,
    algorithm: { ...mod.config.algorithm, groupSize: 2, minibatchSize: 8 },
    schedule: { steps, tasksPerStep: 2, concurrency: 8 },
    // a random model writes until the token limit; 16 tokens keep an M-ASK episode (up to 16 calls) short
    sampling: { maxNewTokens: 16 },
  };
  const { config, cast } = resolveRunConfig(raw, { roles: workflowRoles(mod.workflow) });
  const opts = runtimeOptions(config, cast, mod);
  const tokenizer = await loadTokenizer(BASE_CHECKPOINT);
  const tiny = { ...presetConfig("tiny", tokenizer.eosTokenIds), vocabSize: tokenizer.vocabSize };
  const models = opts.models.map((m) => ({ ...m, source: { config: tiny, seed: 1 }, tokenizer }));
  return runTraining({
    runDir,
    build: (startStep) => createRuntime({ ...opts, models, startStep }),
    tasks: mod.tasks.train,
    initialState: mod.initialState,
    taskId: mod.taskId,
    rewards: opts.rewards,
    steps,
    tasksPerStep: config.schedule.tasksPerStep,
    groupSize: config.algorithm.groupSize,
    seed: config.seed,
    checkpointEvery: steps,
    keep: 1,
    eval: { every: steps, tasks: mod.tasks.dev!.slice(0, 2), episodes: 2, metric: mod.metric, greedy: true },
  });
}
