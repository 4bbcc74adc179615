// A gateway backend straight onto a cast's worker groups, for serving trained models without
// training (`maso serve`): every call is generated with `keep: false`, so no worker group caches a
// sample of it. It keeps no episodes: one API key (the server's) names the single "serve" episode.

import type { Cast } from "../runtime/cast.js";
import { phaseTimer } from "../runtime/controller/phase-timer.js";
import { routed } from "../runtime/controller/role-router.js";
import type { Transport } from "../runtime/protocol/transport.js";
import { UNCAPPED_NEW_TOKENS } from "../workflow/node-exec.js";
import { responseIdOf } from "./api.js";
import { templateMessage } from "./prompt-chain.js";
import { parseReply } from "./reply.js";
import type { GatewayBackend, GatewayMessage } from "./types.js";

/** Responses kept for `previous_response_id` (oldest forgotten first). */
const MAX_CONVERSATIONS = 1024;

export interface CastBackendOptions {
  /** The key every request must carry (Bearer or x-api-key). */
  apiKey: string;
  /** The run's `sampling.maxNewTokens`: caps every call, and is the limit of calls that set none. */
  maxNewTokens?: number;
}

/**
 * Serves `roles` from the cast behind `transport`. Sampling is the request's (default greedy, so a
 * trained agent answers as `maso eval` scores it); a request's `seed` seeds it.
 * @example const g = await serveGateway(castBackend(rt.cast, rt.transport, roles, { apiKey }), { port: 8400 });
 */
export function castBackend(cast: Cast, transport: Transport, roles: readonly string[], o: CastBackendOptions): GatewayBackend {
  const route = { step: 0, seed: 0, timer: phaseTimer() };
  const conversations = new Map<string, GatewayMessage[]>();
  let calls = 0;
  return {
    roles: () => roles,
    episodeOfKey: (key) => (key === o.apiKey ? "serve" : null),
    conversation: (_episode, responseId) => conversations.get(responseId),
    async complete(call, listener) {
      const n = calls++;
      const callId = `serve-${n}`;
      listener?.started(callId);
      const cap = o.maxNewTokens ?? UNCAPPED_NEW_TOKENS;
      const { model, m } = routed(cast, route, {
        episodeId: call.episodeId,
        role: call.role,
        node: call.node ?? "serve",
        visit: n,
        ...(call.seed !== undefined && { seed: call.seed }),
        turn: call.turn ?? 0,
        sampling: { temperature: call.temperature ?? 0, topP: call.topP ?? 1, topK: 0 },
        stop: call.stop,
        maxNewTokens: Math.min(call.maxTokens ?? cap, cap),
        fitContext: true,
        ...(call.logprobs && { logprobs: true, ...(call.topLogprobs && { topLogprobs: call.topLogprobs }) }),
        messages: call.messages.map(templateMessage),
        ...(call.tools && { tools: call.tools }),
      });
      const onText = listener && ((d: string) => listener.text(d));
      const res = await transport.call(model, "generate", { ...m, keep: false }, onText && { onText });
      const completion = {
        callId,
        text: res.text,
        promptTokens: res.promptTokens,
        outputTokens: res.outputTokens,
        finishReason: res.finishReason ?? "stop",
        ...(res.logprobs && { logprobs: res.logprobs }),
      };
      const reply = parseReply(call, completion);
      conversations.set(responseIdOf(call.api, callId), [
        ...call.messages,
        { role: "assistant", content: reply.content ?? "", ...(reply.toolCalls.length > 0 && { toolCalls: reply.toolCalls }) },
      ]);
      if (conversations.size > MAX_CONVERSATIONS) conversations.delete(conversations.keys().next().value!);
      return { ...completion, reply };
    },
  };
}
