// A TEST DOUBLE for routing tests: a RoleCaller that answers from a script. It is not a model and
// must never stand in for one; it exists so workflow walking can be tested without generation.

import type { RoleCaller, RoleCallRequest, RoleCallResult } from "./role-call.js";

export interface ScriptedCaller extends RoleCaller {
  /** Every request received, in arrival order. */
  readonly calls: RoleCallRequest[];
  /** Most calls that were in flight at the same time (shows episodes ran concurrently). */
  readonly maxInFlight: () => number;
}

/**
 * Builds a scripted RoleCaller (test double for routing). The sample handle's model is
 * "scripted" so a record can never be mistaken for a model sample.
 *
 * @example
 * const caller = scriptedCaller((req) => (req.role === "search" ? "<end>" : "<final_answer>x</final_answer>"));
 */
export function scriptedCaller(
  script: (req: RoleCallRequest) => string,
  options: { delayMs?: (req: RoleCallRequest) => number } = {},
): ScriptedCaller {
  const calls: RoleCallRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let nextId = 0;
  return {
    calls,
    maxInFlight: () => maxInFlight,
    async call(req: RoleCallRequest): Promise<RoleCallResult> {
      calls.push(req);
      const id = nextId++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        const delay = options.delayMs?.(req) ?? 0;
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        const text = script(req);
        const promptChars = req.prompt?.length ?? req.messages?.reduce((a, m) => a + m.content.length, 0) ?? 0;
        return {
          text,
          sampleHandle: { model: "scripted", id },
          promptTokens: Math.ceil(promptChars / 4),
          outputTokens: Math.ceil(text.length / 4),
        };
      } finally {
        inFlight--;
      }
    },
  };
}
