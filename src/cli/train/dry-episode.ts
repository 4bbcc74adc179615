// `maso train --check`'s dry run: ONE episode on the first train task with every role answering a
// fixed placeholder (the scripted caller, never a model), then the reward functions, with their
// weights, and the metric on it — so a throwing initialState, node, reward function or metric, or a
// role no reward covers, is found before training. It trains nothing and writes nothing.
import { combineRewards } from "../../rewards/combine.js";
import type { NamedReward } from "../../rewards/types.js";
import type { RoleCaller, RoleCallRequest } from "../../workflow/role-call.js";
import { runEpisodes } from "../../workflow/runner.js";
import { scriptedCaller } from "../../workflow/scripted-caller.js";
import type { Trajectory } from "../../workflow/trajectory.js";
import { type CheckProblem, errorProblem } from "./check-problem.js";
import type { WorkflowModule } from "./workflow-module.js";

/** What every role "generates" in the dry run: not empty, so per-token rewards have a token to land on. */
export const DRY_OUTPUT = "dry run";
/** The dry episode gives up after this long (a hanging tool or node). */
export const DRY_EPISODE_TIMEOUT_MS = 60_000;

export interface DryRun {
  problems: CheckProblem[];
  /** the dry episode's trajectory, when it ran */
  trajectory?: Trajectory<object>;
}

const where = "dry episode (tasks.train[0], every role answering a placeholder)";

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<"timeout">((res) => {
    timer = setTimeout(() => res("timeout"), ms);
    timer.unref();
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/**
 * Runs the dry episode and checks what a training step would do with it. `rewards` are the
 * functions a run would use (scaled by rewardWeights when the config is valid).
 * @example
 * const { problems } = await dryEpisode(mod, weightedRewards(mod.rewards, config.rewardWeights));
 */
export async function dryEpisode(
  mod: WorkflowModule<object, unknown>,
  rewards: readonly NamedReward<unknown, object>[],
  timeoutMs = DRY_EPISODE_TIMEOUT_MS,
  checkPrompt?: (req: RoleCallRequest) => void,
): Promise<DryRun> {
  const task = mod.tasks.train[0];
  let state: object;
  let taskId: string | undefined;
  try {
    state = mod.initialState(task);
    if (state === null || typeof state !== "object")
      return { problems: [{ code: "CHECK_INITIAL_STATE", message: `${where}: initialState returned ${String(state)}, not an object` }] };
  } catch (e) {
    return { problems: [errorProblem(e, "CHECK_INITIAL_STATE", `${where}: initialState threw: `)] };
  }
  const problems: CheckProblem[] = [];
  if (mod.taskId)
    try {
      const id = mod.taskId(task, 0);
      if (typeof id === "string" && id !== "") taskId = id;
      else problems.push({ code: "CHECK_TASK_ID", message: `${where}: taskId returned ${JSON.stringify(id)}, not a non-empty string` });
    } catch (e) {
      problems.push(errorProblem(e, "CHECK_TASK_ID", `${where}: taskId threw: `));
    }
  const scripted = scriptedCaller(() => DRY_OUTPUT);
  // a prompt the role's model would refuse fails here as it would fail the run
  const caller: RoleCaller = {
    call: async (req, onText) => {
      checkPrompt?.(req);
      return scripted.call(req, onText);
    },
  };
  const ran = await withTimeout(runEpisodes(mod.workflow, [{ id: "check-0", state, taskId }], { caller }), timeoutMs);
  if (ran === "timeout") {
    problems.push({
      code: "CHECK_EPISODE_TIMEOUT",
      message: `${where}: did not finish within ${timeoutMs / 1000} s (a tool or node that never returns?)`,
    });
    return { problems };
  }
  const [trajectory] = ran;
  if (trajectory.status === "error") {
    const f = trajectory.error;
    problems.push({
      code: "CHECK_EPISODE_FAILED",
      message: `${where}: failed${f?.node ? ` at node "${f.node}"` : ""}: ${f?.code ?? "error"}: ${f?.message ?? "unknown"}`,
    });
    return { problems, trajectory };
  }
  // each function alone first, so every throwing one is named; then all together, as a step combines them
  const working: NamedReward<unknown, object>[] = [];
  for (const r of rewards) {
    try {
      r.fn(trajectory, task);
      working.push(r);
    } catch (e) {
      problems.push({
        code: "REWARD_FN_FAILED",
        message: `${where}: reward function "${r.name}" threw: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  }
  if (working.length === rewards.length)
    try {
      combineRewards(trajectory, task, working);
    } catch (e) {
      problems.push(errorProblem(e, "REWARD_INVALID", `${where}: `));
    }
  if (mod.metric)
    try {
      const v = mod.metric(trajectory, task);
      if (typeof v !== "number" || !Number.isFinite(v))
        problems.push({ code: "CHECK_METRIC", message: `${where}: metric returned ${String(v)}, not a finite number` });
    } catch (e) {
      problems.push(errorProblem(e, "CHECK_METRIC", `${where}: metric threw: `));
    }
  return { problems, trajectory };
}
