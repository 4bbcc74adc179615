// An agent module as a workflow module: one agent node that opens the episode on the gateway, runs
// the user's agent against it, and turns each HTTP call into a role call of the same controller and
// worker groups (token-exact prompts, records, rewards). Nothing here generates or trains.

import { MasoError } from "../errors.js";
import { END, START, type Workflow } from "../workflow/graph-types.js";
import { workflow } from "../workflow/graph.js";
import type { AgentIO } from "../workflow/graph-types.js";
import type { AgentContext, AgentModule, AgentResult } from "./agent-module.js";
import { agentReward, type AgentState } from "./agent-rewards.js";
import { episodeCalls } from "./episode-calls.js";
import { inEpisode } from "./episode-context.js";
import type { EpisodeHandler } from "./episode-registry.js";
import { gatewayHost } from "./host.js";

const finite = (v: unknown) => typeof v === "number" && Number.isFinite(v);

/** The agent's result, checked: numbers finite, maps of numbers. Throws naming the bad field. */
export function checkAgentResult(r: unknown): AgentResult {
  const bad = (what: string) =>
    new MasoError(
      "AGENT_RESULT",
      `the agent returned ${what}`,
      "return { reward?: number, roleRewards?: {...}, callRewards?: {...}, metrics?: {...} }",
    );
  if (r === null || typeof r !== "object" || Array.isArray(r))
    return (() => {
      throw bad(`${r === null ? "null" : typeof r} instead of an object`);
    })();
  const o = r as Record<string, unknown>;
  if (o.reward !== undefined && !finite(o.reward)) throw bad(`reward ${String(o.reward)} (a finite number is needed)`);
  for (const k of ["roleRewards", "callRewards", "metrics"] as const) {
    const m = o[k];
    if (m === undefined) continue;
    if (m === null || typeof m !== "object" || Array.isArray(m)) throw bad(`${k} that is not an object of numbers`);
    for (const [key, v] of Object.entries(m)) if (!finite(v)) throw bad(`${k}.${key} = ${String(v)} (a finite number is needed)`);
  }
  return o as AgentResult;
}

/** One episode of the agent: opens it on the gateway, runs the agent in its context, checks the result. */
async function runAgent<T>(mod: AgentModule<T>, state: AgentState<T>, io: AgentIO, opts: { host?: string; port?: number }) {
  const host = await gatewayHost(opts);
  const calls = episodeCalls(io);
  let reported: AgentResult | undefined;
  let markEnded = () => {};
  const ended = new Promise<void>((resolve) => {
    markEnded = resolve;
  });
  const handler: EpisodeHandler = {
    complete: calls.complete,
    conversation: calls.conversation,
    report(body) {
      reported = checkAgentResult(body);
    },
    end: () => markEnded(),
  };
  const episode = host.registry.open(io.episodeId, handler, mod.roles);
  // an agent that never returns must not hold its episode open past the deadline
  io.signal.addEventListener("abort", episode.close, { once: true });
  try {
    const baseURL = host.server.baseUrlOf(io.episodeId);
    const episodeURL = baseURL.replace(/\/v1$/, "");
    const ctx: AgentContext = {
      baseURL,
      apiKey: episode.apiKey,
      signal: io.signal,
      episodeId: io.episodeId,
      rewardURL: `${episodeURL}/reward`,
      resultKey: episode.resultKey,
      endURL: `${episodeURL}/end`,
      reported: () => reported,
      ended,
    };
    // calls the agent makes from here on, with any client, carry this episode's secret
    const result = await inEpisode(episode.apiKey, () => mod.agent(state.task, ctx));
    const checked = checkAgentResult(result);
    // an agent that says nothing about rewards trained on nothing: a failure, not a silent skip
    if (checked.reward === undefined && checked.roleRewards === undefined && checked.callRewards === undefined)
      throw new MasoError(
        "AGENT_NO_REWARD",
        "the agent returned no reward, roleRewards or callRewards",
        "return { reward } (or post it to rewardURL)",
      );
    calls.checkResult(checked, mod.roles);
    return { result: checked, retokenizedTurns: calls.retokenizedTurns() };
  } finally {
    episode.close();
  }
}

/**
 * The workflow of an agent module: START → agent → END.
 * @example const wf = agentWorkflow(mod); // roles: mod.roles
 */
export function agentWorkflow<T>(mod: AgentModule<T>, opts: { host?: string; port?: number } = {}): Workflow<AgentState<T>> {
  return workflow<AgentState<T>>({
    name: "agent",
    snapshot: (s) => ({ task: s.task }),
    metrics: (s) => ({ ...(s.result?.metrics ?? {}), retokenizedTurns: s.retokenizedTurns }),
  })
    .agent("agent", mod.roles, (state, io) => runAgent(mod, state, io, opts))
    .edge(START, "agent")
    .edge("agent", END)
    .compile();
}

/**
 * The exports `maso train` / `maso eval` expect of a workflow module, built from an agent module.
 * @example const exp = agentWorkflowExports(agentModule(moduleExports(mod), file));
 */
export function agentWorkflowExports<T>(mod: AgentModule<T>): Record<string, unknown> {
  return {
    ...mod, // config variants and anything else the module exports, for scripts that read them
    workflow: agentWorkflow(mod),
    config: mod.config,
    rewards: [agentReward<T>()],
    tasks: mod.tasks,
    initialState: (task: T): AgentState<T> => ({ task, result: null, retokenizedTurns: 0 }),
    ...(mod.taskId && { taskId: mod.taskId }),
    metric: (t: { finalState: AgentState<T> }, task: T) => {
      const r = t.finalState.result;
      if (!r) return 0;
      return mod.metric ? mod.metric(r, task) : (r.reward ?? 0);
    },
  };
}
