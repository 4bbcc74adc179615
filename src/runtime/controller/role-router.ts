// The controller's RoleCaller: routes each role call through the cast to the worker group (and
// adapter) that serves the role, with a sampling seed derived from the call's identity and the
// role's chat-template variables. It sends text and ids only and keeps no state beyond counters.
import type { Workflow } from "../../workflow/graph-types.js";
import type { RoleCaller, RoleCallRequest, RoleCallResult } from "../../workflow/role-call.js";
import type { CastMap } from "../protocol/cast-map.js";
import type { GenerateRequest } from "../protocol/messages.js";
import type { PhaseTimer } from "./phase-timer.js";
import type { Transport } from "../protocol/transport.js";

/** FNV-1a over a string: a stable 32-bit seed that does not depend on call order. */
export function seedOf(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join("\u0000")) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Each role's extra chat-template variables (roles without any are left out). */
export function roleChatTemplates<S>(wf: Workflow<S, string>): ReadonlyMap<string, Readonly<Record<string, unknown>>> {
  const out = new Map<string, Readonly<Record<string, unknown>>>();
  for (const n of wf.nodes.values()) if (n.kind === "role" && n.role.chatTemplate) out.set(n.role.name, n.role.chatTemplate);
  return out;
}

/** What routing needs besides the cast: the step and run seed the sampling seed derives from, and the roles' chat-template variables. */
export interface RouteOptions {
  step: number;
  seed: number;
  timer: PhaseTimer;
  chatTemplates?: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /** false: the worker groups keep no sample of these calls (evaluation); records then hold a null handle. */
  keep?: false;
}

/** The worker group that serves a role call and the request it gets (adapter, seed, chat-template variables). */
export function routed(cast: CastMap, o: RouteOptions, req: RoleCallRequest): { model: string; m: GenerateRequest } {
  return o.timer.sync("routing", () => {
    const entry = cast.roles.get(req.role)!;
    const vars = req.messages && o.chatTemplates?.get(req.role);
    const m: GenerateRequest = {
      call: req,
      adapter: entry.adapter,
      seed: seedOf(o.seed, o.step, req.episodeId, req.node, req.seed ?? req.visit),
      ...(vars && { chatTemplate: vars }),
      ...(o.keep === false && { keep: false as const }),
    };
    return { model: entry.model, m };
  });
}

/**
 * A RoleCaller that sends each call to the worker group the cast names, with the role's
 * chat-template variables (from `chatTemplates`, see {@link roleChatTemplates}) on chat requests.
 *
 * @example
 * const caller = routingCaller(cast, transport, { step: 3, seed: 1, timer, chatTemplates: roleChatTemplates(wf) });
 */
export function routingCaller(cast: CastMap, transport: Transport, o: RouteOptions): RoleCaller {
  return {
    async call(req: RoleCallRequest, onText?: (delta: string) => void): Promise<RoleCallResult> {
      const msg = routed(cast, o, req);
      const res = await transport.call(msg.model, "generate", msg.m, onText && { onText });
      const { text, sampleHandle, promptTokens, outputTokens, finishReason, chained, logprobs } = res;
      return {
        text,
        sampleHandle,
        ...(sampleHandle === null && { model: msg.model }),
        promptTokens,
        outputTokens,
        finishReason,
        ...(chained !== undefined && { chained }),
        ...(logprobs && { logprobs }),
      };
    },
  };
}
