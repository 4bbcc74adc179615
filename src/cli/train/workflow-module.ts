// Checks a loaded workflow module against its contract (the WorkflowModule type, src/run/): a compiled
// workflow, reward functions, train/dev tasks and the initial state of an episode, as named exports
// or one default-exported object. Says what is missing; runs nothing.
import { MasoError } from "../../errors.js";
import { isTaskSplits } from "../../envs/tasks/types.js";
import type { NamedReward } from "../../rewards/types.js";
import type { WorkflowModule } from "../../run/workflow-module.js";
import type { Workflow } from "../../workflow/graph-types.js";

export type { WorkflowModule };

const bad = (file: string, what: string, hint: string) => new MasoError("WORKFLOW_MODULE", `${file}: ${what}`, hint);

/** True for a compiled workflow. */
export function isWorkflow(v: unknown): v is Workflow<object, string> {
  const w = v as Workflow<object, string> | null;
  return !!w && typeof w === "object" && typeof w.name === "string" && w.nodes instanceof Map && w.outgoing instanceof Map;
}

/** The module's exports: named ones, or the fields of a default-exported object. */
export function moduleExports(mod: Record<string, unknown>): Record<string, unknown> {
  let d = mod.default as Record<string, unknown> | undefined;
  // a .ts file loaded as CommonJS (no "type": "module" in its package.json) has its default export wrapped once more
  if (d && typeof d === "object" && !isWorkflow(d) && d.workflow === undefined && d.default && typeof d.default === "object")
    d = d.default as Record<string, unknown>;
  if (mod.workflow === undefined && d && typeof d === "object" && !isWorkflow(d)) return { ...d };
  return { ...mod, workflow: mod.workflow ?? (isWorkflow(d) ? d : undefined) };
}

/**
 * Every problem with the training exports of a loaded module (the workflow itself is checked by
 * the caller), each as what is wrong and what to do; empty when the module can train.
 * @example
 * const problems = trainingModuleProblems(moduleExports(await importModule(file)));
 */
export function trainingModuleProblems(exp: Record<string, unknown>): { what: string; hint: string }[] {
  const out: { what: string; hint: string }[] = [];
  if (!isWorkflow(exp.workflow))
    out.push({ what: "exports no compiled workflow", hint: "export const workflow = workflow(...)...compile()" });
  const rewards = exp.rewards as NamedReward[] | undefined;
  if (!Array.isArray(rewards) || rewards.length === 0 || rewards.some((r) => typeof r?.name !== "string" || typeof r.fn !== "function"))
    out.push({
      what: "exports no 'rewards' (a non-empty array of named reward functions)",
      hint: "export const rewards = [sharedOutcome(score)]",
    });
  if (!isTaskSplits(exp.tasks))
    out.push({
      what: "exports no 'tasks' ({ train: [...], dev?: [...], test?: [...] } with at least one train task)",
      hint: "export const tasks = { train, dev }",
    });
  if (typeof exp.initialState !== "function")
    out.push({
      what: "exports no 'initialState' (task => the episode's first state)",
      hint: "export const initialState = (task) => ({ ... })",
    });
  for (const k of ["taskId", "metric"] as const)
    if (exp[k] !== undefined && typeof exp[k] !== "function") out.push({ what: `'${k}' must be a function`, hint: "see docs/training.md" });
  return out;
}

/**
 * Checks the training exports of a loaded module (the workflow itself is checked by the caller).
 * Errors: WORKFLOW_MODULE, naming every missing or malformed export.
 * @example
 * const m = trainingModule(moduleExports(await importModule(file)), file);
 */
export function trainingModule(exp: Record<string, unknown>, file: string): WorkflowModule<object, unknown> {
  const problems = trainingModuleProblems(exp);
  if (problems.length > 0) throw bad(file, problems.map((p) => p.what).join("; "), problems.map((p) => p.hint).join("; "));
  return exp as unknown as WorkflowModule<object, unknown>;
}

/**
 * The module's `metric` and its `split` tasks, for anything that scores episodes on a split (`maso
 * eval`, scripts/signal.ts): EVAL_NO_METRIC without a metric, EVAL_NO_TASKS when the split is empty.
 */
export function scoredSplit<S extends object, T>(mod: WorkflowModule<S, T>, file: string, split: "train" | "dev" | "test") {
  if (!mod.metric)
    throw new MasoError("EVAL_NO_METRIC", `${file} exports no 'metric'`, "export const metric = (trajectory, task) => score in [0, 1]");
  const tasks = mod.tasks[split];
  if (!tasks?.length) throw new MasoError("EVAL_NO_TASKS", `${file} exports no ${split} tasks`, "export tasks = { train, dev, test }");
  return { tasks, metric: mod.metric };
}
