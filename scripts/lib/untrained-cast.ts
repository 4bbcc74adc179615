// A workflow module's untrained cast, built the way `maso train` builds it (the module's config or
// one of its `configs` variants), for scripts that sample or evaluate episodes without training.
import { loadExports, workflowRoles } from "../../src/cli/commands/train.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { scoredSplit, trainingModule } from "../../src/cli/train/workflow-module.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import type { Trajectory, Workflow } from "../../src/workflow/index.js";
import { pickConfig } from "../results.js";
import { usage } from "./script-main.js";

/**
 * The module of `file` and a runtime of its untrained cast under `variant` (default: its `config`).
 * @example const { mod, rt } = await untrainedCast("examples/workflows/iterative-search/workflow.ts", "baseQa");
 */
export async function untrainedCast(file: string, variant: string | undefined) {
  const exp = await loadExports(file);
  const mod = trainingModule(exp, file);
  const { config, cast } = resolveRunConfig(pickConfig(exp, file, variant), {
    roles: workflowRoles(mod.workflow as Workflow<object, string>),
    source: file,
  });
  const rt = await createRuntime({ ...runtimeFromConfig(config, cast, mod), startStep: 0 });
  return { mod, rt };
}

export type SplitName = "train" | "dev" | "test";

/** `s` as a split name, or a usage error naming `flag`. */
export function splitArg(s: string, flag: string, help: string): SplitName {
  if (s !== "train" && s !== "dev" && s !== "test") throw usage(`${flag}: unknown split '${s}'`, help);
  return s;
}

/**
 * Greedy episodes of the cast on the first `n` tasks of `split` (ids `<prefix>-<split>-<i>`), with
 * each episode's held-out metric.
 * @example const { tasks, trajectories, scores } = await greedyOnSplit(await untrainedCast(file, undefined), file, "test", 100, "probe");
 */
export async function greedyOnSplit(
  cast: Awaited<ReturnType<typeof untrainedCast>>,
  file: string,
  split: SplitName,
  n: number,
  prefix: string,
) {
  const { mod, rt } = cast;
  const { tasks, metric } = scoredSplit(mod, file, split);
  const chosen = tasks.slice(0, n);
  const items = chosen.map((task, i) => ({
    episode: { id: `${prefix}-${split}-${i}`, state: mod.initialState(task), taskId: `t${i}` },
    task,
  }));
  const trajectories: Trajectory<object>[] = await rt.controller.evaluate(items, { temperature: 0 });
  const scores = trajectories.map((t, j) => metric(t, items[j].task));
  return { tasks: chosen, trajectories, scores };
}
