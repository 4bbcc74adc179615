// A gateway backend straight onto a cast's worker groups, for serving trained models without
// training (`maso serve`): every call is generated, answered and its sample discarded at once. It
// keeps no episodes, so any API key and any episode URL are accepted.

import type { Cast } from "../runtime/cast.js";
import { phaseTimer } from "../runtime/phase-timer.js";
import { routingCaller } from "../runtime/role-router.js";
import type { Transport } from "../runtime/transport.js";
import { DEFAULT_AGENT_MAX_NEW_TOKENS } from "../workflow/node-exec.js";
import { templateMessage } from "./prompt-chain.js";
import type { GatewayBackend } from "./types.js";

/**
 * Serves `roles` from the cast behind `transport`. Sampling is the request's (default greedy, so a
 * trained agent answers as `maso eval` scores it); a request's `seed` seeds it.
 * @example const g = await serveGateway(castBackend(rt.cast, rt.transport, roles), { port: 8400 });
 */
export function castBackend(cast: Cast, transport: Transport, roles: readonly string[]): GatewayBackend {
  const caller = routingCaller(cast, transport, { step: 0, seed: 0, timer: phaseTimer() });
  let calls = 0;
  return {
    roles: () => roles,
    episodeOfKey: () => "serve",
    hasEpisode: () => true,
    async complete(call) {
      const n = calls++;
      const res = await caller.call({
        episodeId: call.episodeId,
        role: call.role,
        node: call.node ?? "serve",
        visit: call.seed ?? n,
        turn: call.turn ?? 0,
        sampling: { temperature: call.temperature ?? 0, topP: call.topP ?? 1, topK: 0 },
        stop: call.stop,
        maxNewTokens: call.maxTokens ?? DEFAULT_AGENT_MAX_NEW_TOKENS,
        messages: call.messages.map(templateMessage),
        ...(call.tools && { tools: call.tools }),
      });
      await transport.call(res.sampleHandle.model, "discard", { ids: [res.sampleHandle.id] });
      return {
        callId: `serve-${n}`,
        text: res.text,
        promptTokens: res.promptTokens,
        outputTokens: res.outputTokens,
        finishReason: res.finishReason ?? "stop",
      };
    },
  };
}
