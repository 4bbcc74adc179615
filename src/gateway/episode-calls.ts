// One agent episode's side of the gateway: turns each HTTP call into a role call of the agent node
// (token-exact prompt chains, streaming, log-probs), keeps what later calls need (chains,
// previous_response_id), and checks the agent's result against the calls it made.

import { MasoError } from "../errors.js";
import type { AgentIO } from "../workflow/graph-types.js";
import type { ParsedOutput, SampleHandle } from "../workflow/trajectory.js";
import type { AgentResult } from "./agent-module.js";
import { type CallOutput, callLabel } from "./agent-rewards.js";
import { responseIdOf } from "./api.js";
import type { EpisodeHandler } from "./episode-registry.js";
import { isRetokenized, replayedCall, templateMessage } from "./prompt-chain.js";
import { parseReply } from "./reply.js";
import type { CompletionListener, GatewayCall, GatewayMessage, ParsedReply } from "./types.js";

/** One answered call of an episode, as later calls' prompt chains and previous_response_id need it. */
interface Answered {
  responseId: string;
  /** `node@turn` when the client labelled the call (callRewards may use it). */
  label?: string;
  messages: readonly GatewayMessage[];
  reply: ParsedReply;
  /** null where the sample was not kept: nothing to chain onto, so a later call re-encodes. */
  sample: SampleHandle | null;
}

function parsedOf(reply: ParsedReply, disconnected: boolean): ParsedOutput {
  const value = { content: reply.content, toolCalls: reply.toolCalls };
  if (disconnected) return { ok: false, reason: "the client disconnected while the reply streamed", fallback: value };
  return reply.formatFailure ? { ok: false, reason: reply.formatFailure, fallback: value } : { ok: true, value };
}

const replyMessage = (r: ParsedReply): GatewayMessage => ({
  role: "assistant",
  content: r.content ?? "",
  ...(r.toolCalls.length > 0 && { toolCalls: [...r.toolCalls] }),
});

/**
 * The calls of one episode, answered through `io`.
 * @example const calls = episodeCalls(io); registry.open(io.episodeId, calls.handler, roles);
 */
export function episodeCalls(io: AgentIO) {
  const answered: Answered[] = [];
  let started = 0;
  let retokenizedTurns = 0;

  const complete: EpisodeHandler["complete"] = async (call: GatewayCall, listener?: CompletionListener) => {
    const callId = `${io.episodeId}-${started++}`;
    const responseId = responseIdOf(call.api, callId);
    listener?.started(callId);
    const j = replayedCall(answered, call.messages);
    let reply: ParsedReply | undefined;
    const res = await io.call({
      role: call.role,
      ...(call.node !== undefined && { node: call.node }),
      ...(call.turn !== undefined && { turn: call.turn }),
      messages: call.messages.map(templateMessage),
      ...(call.tools && { tools: call.tools }),
      ...(j !== null && answered[j].sample && { extend: { sample: answered[j].sample, replayed: answered[j].messages.length } }),
      sampling: {
        ...(call.temperature !== undefined && { temperature: call.temperature }),
        ...(call.topP !== undefined && { topP: call.topP }),
      },
      ...(call.maxTokens !== undefined && { maxNewTokens: call.maxTokens }),
      stop: call.stop,
      ...(call.logprobs && { logprobs: true, ...(call.topLogprobs && { topLogprobs: call.topLogprobs }) }),
      ...(listener && { onText: (d: string) => listener.text(d) }),
      parse: (r) => {
        reply = parseReply(call, {
          callId,
          text: r.text,
          promptTokens: r.promptTokens,
          outputTokens: r.outputTokens,
          finishReason: r.finishReason ?? "stop",
        });
        const retokenized = r.chained !== true && isRetokenized(answered.length, call.messages);
        if (retokenized) retokenizedTurns++;
        const output: CallOutput = { responseId, content: reply.content, toolCalls: reply.toolCalls, retokenized };
        return { parsed: parsedOf(reply, listener?.disconnected?.() === true), output };
      },
    });
    const label = call.node !== undefined ? { label: callLabel(call.node, call.turn ?? io.turn) } : {};
    answered.push({ responseId, messages: call.messages, reply: reply!, sample: res.sampleHandle, ...label });
    return {
      callId,
      text: res.text,
      promptTokens: res.promptTokens,
      outputTokens: res.outputTokens,
      finishReason: res.finishReason ?? "stop",
      reply: reply!,
      ...(res.logprobs && { logprobs: res.logprobs }),
    };
  };

  const conversation = (responseId: string): GatewayMessage[] | undefined => {
    const a = answered.find((x) => x.responseId === responseId);
    return a && [...a.messages, replyMessage(a.reply)];
  };

  return {
    complete,
    conversation,
    retokenizedTurns: () => retokenizedTurns,
    /**
     * Refuses a result that would train nothing or name what the episode never had: no call made,
     * callRewards for response ids it never returned, roleRewards for roles it cannot call.
     */
    checkResult(r: AgentResult, roles: readonly string[]): void {
      const bad = (what: string, hint: string) => new MasoError("AGENT_RESULT", what, hint);
      if (answered.length === 0)
        throw new MasoError(
          "AGENT_NO_CALLS",
          `episode ${io.episodeId} made no model call through the gateway`,
          "make the calls inside agent(): with ctx.baseURL/ctx.apiKey, or a client built from OPENAI_BASE_URL / ANTHROPIC_BASE_URL (docs/gateway.md)",
        );
      const ids = new Set(answered.flatMap((a) => (a.label ? [a.responseId, a.label] : [a.responseId])));
      const unknown = Object.keys(r.callRewards ?? {}).filter((k) => !ids.has(k));
      if (unknown.length > 0)
        throw bad(
          `callRewards names response ids this episode never returned: ${unknown.slice(0, 5).join(", ")}`,
          `its ids: ${[...ids].slice(0, 5).join(", ")}`,
        );
      const strangers = Object.keys(r.roleRewards ?? {}).filter((k) => !roles.includes(k));
      if (strangers.length > 0)
        throw bad(`roleRewards names roles the agent does not declare: ${strangers.join(", ")}`, `its roles: ${roles.join(", ")}`);
    },
  };
}
