// `maso train --check`: everything a real run would validate, without training — the module's
// exports, the whole config (every problem at once), the models' files and tokenizers, the runtime
// declarations a run builds from them, and one dry episode through the workflow and the reward
// functions. Prints what it checked; throws one error listing every problem; writes nothing.
import { runConfigIssues, resolveRunConfig } from "../../config/load-config.js";
import type { NamedReward } from "../../rewards/types.js";
import { resolveTrainerConfig } from "../../rl/update/config.js";
import { getEstimator } from "../../rl/advantages/registry.js";
import { defineCast } from "../../runtime/cast.js";
import { type CliIo, println } from "../commands/types.js";
import { outputBudgetWarnings } from "./check-budgets.js";
import { checkModels } from "./check-models.js";
import { type CheckProblem, checkFailed, errorProblem, issueProblem } from "./check-problem.js";
import { dryEpisode } from "./dry-episode.js";
import { promptCheck, roleModels } from "./dry-prompts.js";
import type { Workflow } from "../../workflow/graph-types.js";
import type { Role } from "../../workflow/role.js";
import type { RoleCallRequest } from "../../workflow/role-call.js";
import { runtimeFromConfig } from "../../run/runtime-options.js";
import { trainingModuleProblems, type WorkflowModule } from "./workflow-module.js";

export interface CheckInput {
  /** the workflow module's path and exports (its workflow already checked) */
  file: string;
  exp: Record<string, unknown>;
  /** the run config as read (the module's export or --config), before validation */
  raw: unknown;
  /** the workflow's role names */
  roles: readonly string[];
  /** where the config came from, for messages */
  source: string;
}

/** Each role of the workflow once, as the role nodes declare it. */
function workflowRoleSpecs(wf: Workflow<object, string>): Role<never, unknown>[] {
  const byName = new Map<string, Role<never, unknown>>();
  for (const spec of wf.nodes.values()) if (spec.kind === "role" && !byName.has(spec.role.name)) byName.set(spec.role.name, spec.role);
  return [...byName.values()];
}

function rewardNames(exp: Record<string, unknown>): string[] | undefined {
  const r = exp.rewards;
  return Array.isArray(r) && r.every((x) => typeof x?.name === "string") ? r.map((x) => x.name as string) : undefined;
}

/**
 * Runs every check; prints the cast and a dry-run summary, then "config ok" when nothing is wrong.
 * Errors: one MasoError listing every problem (see {@link checkFailed}).
 * @example
 * await checkTraining({ file, exp, raw, roles: workflowRoles(wf), source }, io);
 */
export async function checkTraining(input: CheckInput, io: CliIo): Promise<void> {
  const { file, exp, raw, roles, source } = input;
  const problems: CheckProblem[] = [];
  const modProblems = trainingModuleProblems(exp);
  problems.push(...modProblems.map((p): CheckProblem => ({ code: "WORKFLOW_MODULE", message: `${file}: ${p.what} (${p.hint})` })));
  const mod = modProblems.length === 0 ? (exp as unknown as WorkflowModule<object, unknown>) : undefined;

  const issues = runConfigIssues(raw, { roles, rewards: rewardNames(exp) });
  problems.push(...issues.map(issueProblem));
  const resolved = issues.length === 0 ? resolveRunConfig(raw, { roles, source }) : undefined;
  if (resolved)
    for (const [role, e] of Object.entries(resolved.cast)) println(io, `  ${role} -> ${e.model}${e.adapter ? `/${e.adapter}` : ""}`);

  problems.push(...(await checkModels((raw as { models?: unknown } | null)?.models)));

  let rewards: readonly NamedReward<unknown, object>[] | undefined = mod?.rewards;
  let checkPrompt: ((req: RoleCallRequest) => void) | undefined;
  if (resolved && mod) {
    const { config, cast } = resolved;
    // the declarations a run hands to createRuntime, checked the way it checks them (nothing loaded)
    try {
      const opts = runtimeFromConfig(config, cast, mod);
      rewards = opts.rewards;
      defineCast({ models: opts.models, roles, cast: opts.cast });
      for (const t of Object.values(opts.trainer as Record<string, object>)) resolveTrainerConfig(t);
      getEstimator(config.algorithm.estimator);
      const models = await roleModels(config, cast);
      checkPrompt = promptCheck(models);
      // a warning, not a problem: the run works, but a role that learns its format cannot finish it
      for (const w of outputBudgetWarnings(workflowRoleSpecs(mod.workflow), models, config.sampling.maxNewTokens)) {
        println(io, `warning: ${w.message}`);
        println(io, `  ${w.hint}`);
      }
    } catch (e) {
      problems.push(errorProblem(e, "CHECK_FAILED"));
    }
    if (config.eval.split === "test" && !mod.tasks.test?.length)
      problems.push({ code: "CONFIG_EVAL_SPLIT", message: 'eval.split is "test" but the workflow module exports no tasks.test' });
  }

  if (mod && rewards) {
    const dry = await dryEpisode(mod, rewards, undefined, checkPrompt);
    problems.push(...dry.problems);
    const t = dry.trajectory;
    if (t) {
      const called = [...new Set(t.records.filter((r) => r.role !== null).map((r) => r.role as string))];
      println(io, `dry episode: ${t.status}, ${t.records.length} steps, roles called: ${called.join(", ") || "none"}`);
    }
  }
  if (problems.length > 0) throw checkFailed(source, problems);
  println(io, "config ok");
}
