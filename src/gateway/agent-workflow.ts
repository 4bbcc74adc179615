// An agent module as a workflow module: one agent node that opens the episode on the gateway, runs
// the user's agent against it, and turns each HTTP call into a role call of the same controller and
// worker groups (token-exact prompts, records, rewards). Nothing here generates or trains.

import { MasoError } from "../errors.js";
import { END, START, type Workflow } from "../workflow/graph-types.js";
import { workflow } from "../workflow/graph.js";
import type { ParsedOutput, SampleHandle } from "../workflow/trajectory.js";
import type { AgentModule, AgentResult } from "./agent-module.js";
import { agentReward, type AgentState, type CallOutput } from "./agent-rewards.js";
import type { EpisodeHandler } from "./episode-registry.js";
import { gatewayHost } from "./host.js";
import { isRetokenized, replayedCall, templateMessage } from "./prompt-chain.js";
import { parseReply } from "./reply.js";
import type { GatewayMessage, ParsedReply } from "./types.js";

/** One answered call of an episode, as later calls' prompt chains need it. */
interface Answered {
  messages: readonly GatewayMessage[];
  reply: ParsedReply;
  sample: SampleHandle;
}

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

function parsedOf(reply: ParsedReply): ParsedOutput {
  const value = { content: reply.content, toolCalls: reply.toolCalls };
  return reply.formatFailure ? { ok: false, reason: reply.formatFailure, fallback: value } : { ok: true, value };
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
    .agent("agent", mod.roles, async (state, io) => {
      const host = await gatewayHost(mod.roles, opts);
      const answered: Answered[] = [];
      let retokenizedTurns = 0;
      let reported: AgentResult | undefined;
      let markEnded = () => {};
      const ended = new Promise<void>((resolve) => {
        markEnded = resolve;
      });
      const handler: EpisodeHandler = {
        async complete(call) {
          const callId = `${io.episodeId}-${answered.length}`;
          const j = replayedCall(answered, call.messages);
          let reply: ParsedReply | undefined;
          const res = await io.call({
            role: call.role,
            ...(call.node !== undefined && { node: call.node }),
            ...(call.turn !== undefined && { turn: call.turn }),
            messages: call.messages.map(templateMessage),
            ...(call.tools && { tools: call.tools }),
            ...(j !== null && { extend: { sample: answered[j].sample, replayed: answered[j].messages.length } }),
            sampling: {
              ...(call.temperature !== undefined && { temperature: call.temperature }),
              ...(call.topP !== undefined && { topP: call.topP }),
            },
            ...(call.maxTokens !== undefined && { maxNewTokens: call.maxTokens }),
            stop: call.stop,
            parse: (r) => {
              const completion = {
                callId,
                text: r.text,
                promptTokens: r.promptTokens,
                outputTokens: r.outputTokens,
                finishReason: r.finishReason ?? "stop",
              };
              reply = parseReply(call, completion);
              const retokenized = r.chained !== true && isRetokenized(answered.length, call.messages);
              if (retokenized) retokenizedTurns++;
              const output: CallOutput = {
                responseId: `chatcmpl-${callId}`,
                content: reply.content,
                toolCalls: reply.toolCalls,
                retokenized,
              };
              return { parsed: parsedOf(reply), output };
            },
          });
          answered.push({ messages: call.messages, reply: reply!, sample: res.sampleHandle });
          return {
            callId,
            text: res.text,
            promptTokens: res.promptTokens,
            outputTokens: res.outputTokens,
            finishReason: res.finishReason ?? "stop",
            reply: reply!,
          };
        },
        report(body) {
          reported = checkAgentResult(body);
        },
        end: () => markEnded(),
      };
      const episode = host.registry.open(io.episodeId, handler);
      // an agent that never returns must not hold its episode open past the deadline
      io.signal.addEventListener("abort", episode.close, { once: true });
      try {
        const episodeURL = host.server.baseUrlOf(io.episodeId).replace(/\/v1$/, "");
        const result = await mod.agent(state.task, {
          baseURL: host.server.baseUrlOf(io.episodeId),
          apiKey: episode.apiKey,
          signal: io.signal,
          episodeId: io.episodeId,
          rewardURL: `${episodeURL}/reward`,
          endURL: `${episodeURL}/end`,
          reported: () => reported,
          ended,
        });
        const checked = checkAgentResult(result);
        // an agent that says nothing about rewards trained on nothing: a failure, not a silent skip
        if (checked.reward === undefined && checked.roleRewards === undefined && checked.callRewards === undefined)
          throw new MasoError(
            "AGENT_NO_REWARD",
            "the agent returned no reward, roleRewards or callRewards",
            "return { reward } (or post it to rewardURL)",
          );
        return { result: checked, retokenizedTurns };
      } finally {
        episode.close();
      }
    })
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
