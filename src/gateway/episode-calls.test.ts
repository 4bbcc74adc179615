// One episode's calls through a stand-in agent node: a client that disconnects mid-stream leaves
// a recorded failure, previous_response_id finds the conversation, labels key rewards.
import { describe, expect, it } from "vitest";
import type { AgentCallRequest, AgentIO } from "../workflow/graph-types.js";
import type { ParsedOutput } from "../workflow/trajectory.js";
import { episodeCalls } from "./episode-calls.js";
import type { GatewayCall } from "./types.js";

function fakeIO(text: string) {
  const parsed: ParsedOutput[] = [];
  const io: AgentIO = {
    episodeId: "e1",
    turn: 0,
    signal: new AbortController().signal,
    async call(req: AgentCallRequest) {
      req.onText?.(text);
      const res = {
        text,
        sampleHandle: { model: "m", id: parsed.length },
        promptTokens: 3,
        outputTokens: 2,
        finishReason: "stop" as const,
      };
      parsed.push(req.parse(res).parsed);
      return res;
    },
  };
  return { io, parsed };
}

const call = (over: Partial<GatewayCall> = {}): GatewayCall => ({
  episodeId: "e1",
  api: "responses",
  role: "writer",
  messages: [{ role: "user", content: "hi" }],
  stop: [],
  logprobs: false,
  ...over,
});

describe("episodeCalls", () => {
  it("records a call whose streaming client went away as failed, and one that stayed as ok", async () => {
    const { io, parsed } = fakeIO("hello");
    const calls = episodeCalls(io);
    const heard: string[] = [];
    await calls.complete(call(), { started: () => {}, text: (d) => heard.push(d), disconnected: () => true });
    await calls.complete(call(), { started: () => {}, text: () => {}, disconnected: () => false });
    expect(heard).toEqual(["hello"]);
    expect(parsed[0]).toMatchObject({ ok: false, reason: "the client disconnected while the reply streamed" });
    expect(parsed[1]).toMatchObject({ ok: true });
  });

  it("gives the conversation through an earlier response, and accepts rewards by id or label", async () => {
    const { io } = fakeIO("hello");
    const calls = episodeCalls(io);
    const done = await calls.complete(call({ node: "draft", turn: 2 }));
    expect(calls.conversation(`resp_${done.callId}`)).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    expect(() => calls.checkResult({ callRewards: { [`resp_${done.callId}`]: 1, "draft@2": 1 } }, ["writer"])).not.toThrow();
    expect(() => calls.checkResult({ callRewards: { "draft@3": 1 } }, ["writer"])).toThrow(/never returned: draft@3/);
  });
});
