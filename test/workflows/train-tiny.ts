// Shared by the workflow training tests (QA, code, math): runs a workflow module's own config for a few
// RL steps in-process (runTraining, as `maso train` does), with one change: every model is a fresh tiny
// decoder (the engine's `tiny` preset) on the config's base checkpoint tokenizer, so the prompts are
// exactly the ones the real base model sees while a step takes about a second. LoRA adapters, value
// head, estimator, rewards and cast all come from the module's config.
import { join } from "node:path";
import { workflowRoles } from "../../src/cli/commands/train.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import type { WorkflowModule } from "../../src/cli/train/workflow-module.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { presetConfig } from "../../src/config/model-presets.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { runTraining, type TrainRunResult } from "../../src/run/rl-run.js";
import type { Workflow } from "../../src/workflow/index.js";

/** A module as the reference examples export it: every optional export plus a run config object. */
export type ExampleModule<S extends object = object, T = unknown> = Required<Pick<WorkflowModule<S, T>, "taskId" | "metric">> &
  WorkflowModule<S, T> & { config: Record<string, unknown> & { algorithm: object } };

/**
 * `steps` RL steps of `mod` with `algorithm` overrides (2 tasks × 2 episodes per step, greedy eval on
 * 2 dev tasks at the end); returns the metrics rows and the roles of the workflow.
 * @example const { rows, roles } = await trainTiny(coding, root, { criticWarmupSteps: 1 });
 */
export async function trainTiny<S extends object, T>(
  mod: ExampleModule<S, T>,
  root: string,
  algorithm: Record<string, unknown> = {},
  steps = 2,
): Promise<TrainRunResult & { roles: string[] }> {
  const runDir = join(root, mod.workflow.name);
  // workflowRoles reads node names only, so any state type will do
  const roles = workflowRoles(mod.workflow as unknown as Workflow<object, string>);
  const raw = {
    ...mod.config,
    runDir,
    algorithm: { ...mod.config.algorithm, groupSize: 2, minibatchSize: 8, ...algorithm },
    // 4 episodes at once: every episode of a step (and of the final eval)
    schedule: { steps, tasksPerStep: 2, concurrency: 4 },
    // a random model writes until the token limit; 16 tokens keep a multi-turn episode (M-ASK: up to 16 calls) short
    sampling: { maxNewTokens: 16 },
  };
  const { config, cast } = resolveRunConfig(raw, { roles });
  const opts = runtimeFromConfig(config, cast, mod);
  // the reference configs load every model from the one base model directory; its tokenizer serves all
  const tokenizer = await loadTokenizer(Object.values(config.models)[0].weights!);
  const tiny = { ...presetConfig("tiny", tokenizer.eosTokenIds), vocabSize: tokenizer.vocabSize };
  const models = opts.models.map((m) => ({ ...m, source: { config: tiny, seed: 1 }, tokenizer }));
  const result = await runTraining({
    runDir,
    build: (startStep) => createRuntime({ ...opts, models, startStep }),
    tasks: mod.tasks.train,
    initialState: mod.initialState,
    taskId: mod.taskId,
    steps,
    tasksPerStep: config.schedule.tasksPerStep,
    groupSize: config.algorithm.groupSize,
    seed: config.seed,
    checkpointEvery: steps,
    keep: 1,
    eval: { every: steps, tasks: mod.tasks.dev!.slice(0, 2), episodes: 2, metric: mod.metric, greedy: true },
  });
  return { ...result, roles };
}

/**
 * What a run config's cast shape resolves to against `roles`: its model names and each role's
 * adapter (null: the role uses the model's own weights).
 * @example expect(castOf(mod.configs.shared, roles)).toEqual({ models: ["shared"], adapters: [null, null] })
 */
export function castOf(raw: object, roles: string[]): { models: string[]; adapters: (string | null)[] } {
  const { config, cast } = resolveRunConfig(raw, { roles });
  return { models: Object.keys(config.models), adapters: roles.map((r) => cast[r].adapter) };
}
