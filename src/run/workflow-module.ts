// The shape of a workflow module, what `maso train`, `maso eval` and `maso serve` load: a compiled
// workflow, reward functions, train/dev/test tasks and the first state of an episode, plus an
// optional run config, metric and task key. Types and an identity helper that checks them; the CLI
// checks a loaded module's shape at run time (src/cli/train/workflow-module.ts).
import type { RunConfigInput } from "../config/run-config.js";
import type { NamedReward } from "../rewards/types.js";
import type { Workflow } from "../workflow/graph-types.js";
import type { Trajectory } from "../workflow/trajectory.js";

/** A module's task splits: train draws training steps, dev selects checkpoints, test is for `maso eval` only. */
export interface WorkflowTasks<T> {
  train: readonly T[];
  dev?: readonly T[];
  test?: readonly T[];
}

/**
 * What a workflow module provides (docs/training.md), as named exports or one default export.
 * @example
 * export const workflow = build<S>({ name: "demo" }).role(...).compile();
 * export const rewards = [sharedOutcome((t) => (t.finalState.answer === "4" ? 1 : 0))];
 * export const tasks = { train: [{ q: "2+2" }], dev: [{ q: "1+3" }] };
 * export const initialState = (task) => ({ q: task.q, hint: "", answer: "" });
 */
export interface WorkflowModule<S extends object = object, T = unknown> {
  workflow: Workflow<S, string>;
  /** run config (docs/config.md); `--config` replaces it */
  config?: unknown;
  rewards: readonly NamedReward<T, S>[];
  /** dev: checkpoint selection during training; test: held-out evaluation by `maso eval` only */
  tasks: WorkflowTasks<T>;
  /** the state an episode on `task` starts from */
  initialState: (task: T) => S;
  /** group-baseline key of a task (default `task-<index>`) */
  taskId?: (task: T, index: number) => string;
  /** held-out score of an episode (0..1), logged as eval.metric on the dev tasks */
  metric?: (trajectory: Trajectory<S>, task: T) => number;
}

/** A workflow module as written by a user: the same fields, with the config typed. */
export interface WorkflowModuleInput<S extends object, T> extends Omit<WorkflowModule<S, T>, "config"> {
  config?: RunConfigInput;
}

/**
 * Types a workflow module (state `S` from the workflow, task `T` from the tasks) and returns it
 * unchanged; default-export the result for `maso train`.
 * @example
 * export default defineWorkflowModule({ workflow, rewards, tasks, initialState, metric, config });
 */
export function defineWorkflowModule<S extends object, T>(module: WorkflowModuleInput<S, T>): WorkflowModule<S, T> {
  return module;
}
