// The contract of an agent module that `maso train` loads like a workflow module: the user's own agent
// (any SDK that speaks OpenAI chat completions), the role names it requests as `model`, and tasks.
// Checks the shape and says what is missing; runs nothing.

import { isTaskSplits } from "../envs/tasks/types.js";
import { MasoError } from "../errors.js";

/** What an agent receives for one episode: point the SDK's base URL and API key here. */
export interface AgentContext {
  /** `OPENAI_BASE_URL` for this episode (`…/episodes/<id>/v1`). */
  baseURL: string;
  /** A per-episode API key; with the plain `…/v1` base URL it names the episode too. */
  apiKey: string;
  /** Aborted when the episode's deadline passes: stop making calls. */
  signal: AbortSignal;
  episodeId: string;
  /**
   * Where an out-of-process agent POSTs its result (an AgentResult as JSON), and its end, each with
   * `Authorization: Bearer <resultKey>`: a secret apart from `apiKey`, so nothing the agent lets
   * make model calls can post its reward.
   */
  rewardURL: string;
  endURL: string;
  resultKey: string;
  /** The last result POSTed to `rewardURL`, if any. */
  reported(): AgentResult | undefined;
  /** Settles when the agent POSTs to `endURL`. */
  ended: Promise<void>;
}

/**
 * What an agent returns. `reward` is shared by every call of the episode; `roleRewards` replaces it
 * for the roles named; `callRewards` replaces both for single calls, keyed by the response id the
 * SDK saw (`chatcmpl-…`, `resp_…`, `msg_…`) or, for calls labelled with `metadata.maso_node` and
 * `maso_turn`, by `"<node>@<turn>"`. A call left without any reward is skipped (recorded, not trained).
 */
export interface AgentResult {
  reward?: number;
  roleRewards?: Readonly<Record<string, number>>;
  callRewards?: Readonly<Record<string, number>>;
  /** Episode metrics (numbers), averaged into the step's metrics. */
  metrics?: Readonly<Record<string, number>>;
  /** Anything to keep in the trajectory (the agent's answer, …); must be JSON. */
  output?: unknown;
}

export type AgentFn<T> = (task: T, ctx: AgentContext) => Promise<AgentResult>;

/**
 * What an agent module provides.
 * @example
 * export const roles = ["planner", "coder"];
 * export const tasks = { train, dev, test };
 * export async function agent(task, { baseURL, apiKey }) {
 *   const client = new OpenAI({ baseURL, apiKey });
 *   const r = await client.chat.completions.create({ model: "coder", messages: [{ role: "user", content: task.q }] });
 *   return { reward: r.choices[0].message.content === task.answer ? 1 : 0 };
 * }
 */
export interface AgentModule<T = unknown> {
  agent: AgentFn<T>;
  /** The role names the agent requests as `model`; the cast maps them to models. */
  roles: readonly string[];
  tasks: { train: readonly T[]; dev?: readonly T[]; test?: readonly T[] };
  /** run config (docs/config.md); `--config` replaces it */
  config?: unknown;
  /** group-baseline key of a task (default `task-<index>`) */
  taskId?: (task: T, index: number) => string;
  /** held-out score of an episode in [0, 1] (default: its reward) */
  metric?: (result: AgentResult, task: T) => number;
}

const bad = (file: string, what: string, hint: string) => new MasoError("AGENT_MODULE", `${file}: ${what}`, hint);

/** True when the module's exports look like an agent module rather than a workflow module. */
export function isAgentModule(exp: Record<string, unknown>): boolean {
  return typeof exp.agent === "function" && exp.workflow === undefined;
}

/**
 * Checks an agent module's exports; AGENT_MODULE names every missing or malformed one.
 * @example const m = agentModule(moduleExports(await importModule(file)), file);
 */
export function agentModule(exp: Record<string, unknown>, file: string): AgentModule {
  const problems: string[] = [];
  if (typeof exp.agent !== "function")
    problems.push("'agent' must be a function (task, { baseURL, apiKey, signal }) => Promise<{ reward }>");
  const roles = exp.roles as unknown;
  if (
    !Array.isArray(roles) ||
    roles.length === 0 ||
    roles.some((r) => typeof r !== "string" || r === "") ||
    new Set(roles).size !== roles.length
  )
    problems.push("'roles' must be a non-empty list of distinct role names (the `model` names the agent requests)");
  if (!isTaskSplits(exp.tasks)) problems.push("'tasks' must be { train: [...], dev?: [...], test?: [...] } with at least one train task");
  for (const k of ["taskId", "metric"] as const)
    if (exp[k] !== undefined && typeof exp[k] !== "function") problems.push(`'${k}' must be a function`);
  if (problems.length > 0) throw bad(file, problems.join("; "), "see docs/gateway.md for the agent module contract");
  return exp as unknown as AgentModule;
}
