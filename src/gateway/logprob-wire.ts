// OpenAI's per-token log-prob entry, the same in Chat Completions (`choices[].logprobs.content`) and
// Responses (`output_text.logprobs`): the token, its log-prob, its UTF-8 bytes and its top
// alternatives. A pure builder; which tokens and alternatives there are is the backend's business.

import type { TokenLogprob } from "./types.js";

const bytesOf = (text: string) => [...Buffer.from(text, "utf8")];

/**
 * The wire entry of one output token; `top_logprobs` is empty unless the call asked for
 * `top_logprobs` and the backend returned alternatives.
 *
 * @example
 * wireLogprob({ token: "Hé", logprob: -0.5, top: [{ token: "Hé", logprob: -0.5 }] });
 * // { token: "Hé", logprob: -0.5, bytes: [72, 195, 169], top_logprobs: [{ token: "Hé", logprob: -0.5, bytes: [72, 195, 169] }] }
 */
export function wireLogprob(l: TokenLogprob) {
  return {
    token: l.token,
    logprob: l.logprob,
    bytes: bytesOf(l.token),
    top_logprobs: (l.top ?? []).map((a) => ({ token: a.token, logprob: a.logprob, bytes: bytesOf(a.token) })),
  };
}
