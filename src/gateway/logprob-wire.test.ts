// Top log-probs on the wire: a completion's per-token alternatives come out as OpenAI's
// `top_logprobs` entries (token, logprob, UTF-8 bytes) in Chat Completions and in Responses, and
// stay empty lists where the backend returned none. Pure; the live sampler's are checked in
// test/gateway/train-agent.int.test.ts.

import { describe, expect, it } from "vitest";
import { parseReply } from "./reply.js";
import { completionBody } from "./response.js";
import { responsesBody } from "./responses-wire.js";
import type { GatewayCall, GatewayCompletion } from "./types.js";
import { wireLogprob } from "./logprob-wire.js";

const call = (over: Partial<GatewayCall>): GatewayCall => ({
  episodeId: "e",
  api: "chat",
  role: "coder",
  messages: [{ role: "user", content: "hi" }],
  stop: [],
  logprobs: true,
  ...over,
});
const withTop: GatewayCompletion = {
  callId: "c1",
  text: "Hé",
  promptTokens: 3,
  outputTokens: 1,
  finishReason: "stop",
  logprobs: [
    {
      token: "Hé",
      logprob: -0.25,
      top: [
        { token: "Hé", logprob: -0.25 },
        { token: "Ho", logprob: -1.5 },
      ],
    },
  ],
};
const expected = {
  token: "Hé",
  logprob: -0.25,
  bytes: [72, 195, 169],
  top_logprobs: [
    { token: "Hé", logprob: -0.25, bytes: [72, 195, 169] },
    { token: "Ho", logprob: -1.5, bytes: [72, 111] },
  ],
};

describe("top log-probs on the wire", () => {
  it("writes each alternative with its bytes, and an empty list when there are none", () => {
    expect(wireLogprob(withTop.logprobs![0])).toEqual(expected);
    expect(wireLogprob({ token: "a", logprob: -1 })).toEqual({ token: "a", logprob: -1, bytes: [97], top_logprobs: [] });
  });

  it("Chat Completions: choices[0].logprobs.content[].top_logprobs", () => {
    const c = call({ topLogprobs: 2 });
    const body = completionBody(c, withTop, parseReply(c, withTop));
    expect(body.choices[0].logprobs).toEqual({ content: [expected], refusal: null });
  });

  it("Responses: output_text.logprobs[].top_logprobs", () => {
    const c = call({ api: "responses", topLogprobs: 2 });
    const body = responsesBody(c, withTop, parseReply(c, withTop));
    expect(body.top_logprobs).toBe(2);
    expect(body.output[0]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "Hé", logprobs: [expected] }] });
  });
});
