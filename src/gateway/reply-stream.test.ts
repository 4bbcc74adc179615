// The streamed pieces of a reply, cut at every possible point, join to exactly the reply the
// gateway records (reply.ts): reasoning, content and tool calls alike.
import { describe, expect, it } from "vitest";
import { parseReply } from "./reply.js";
import { replyStream } from "./reply-stream.js";
import type { GatewayCall, GatewayToolCall } from "./types.js";

const call = (tools: boolean): GatewayCall => ({
  episodeId: "e",
  api: "chat",
  role: "r",
  messages: [{ role: "user", content: "x" }],
  stop: [],
  logprobs: false,
  ...(tools && { tools: [{ type: "function", function: { name: "add" } }] }),
});

function streamed(c: GatewayCall, text: string, cuts: number[]) {
  let reasoning = "";
  let content = "";
  const toolCalls: GatewayToolCall[] = [];
  const s = replyStream(c, "c1", {
    reasoning: (d) => {
      reasoning += d;
    },
    text: (d) => {
      content += d;
    },
    toolCall: (i, t) => {
      toolCalls[i] = t;
    },
  });
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    s.push(text.slice(at, cut));
    at = cut;
  }
  s.end();
  return { reasoning, content, toolCalls };
}

const block = (args: object) => `<tool_call>\n${JSON.stringify({ name: "add", arguments: args })}\n</tool_call>`;

const cases: [string, boolean][] = [
  ["plain text\n", false],
  ["  leading and trailing  ", false],
  ["<think>\nweighing it\n</think>\n\nThe answer is 4.", false],
  ["<think>\n\n</think>\n\nHi", true],
  [`Let me add.\n${block({ a: 2, b: 3 })}`, true],
  [`${block({ a: 1 })}\n${block({ a: 2 })}\n`, true],
  [`  A\n${block({ a: 1 })}\nB  `, true],
  ["no tags but a < sign and <tool", true],
  [`<think>plan</think>${block({ a: 1 })}`, true],
];

describe("replyStream", () => {
  for (const [text, tools] of cases)
    it(`matches the recorded reply for ${JSON.stringify(text).slice(0, 40)}${tools ? " (tools)" : ""}`, () => {
      const c = call(tools);
      const final = parseReply(c, { callId: "c1", text, promptTokens: 1, outputTokens: 1, finishReason: "stop" });
      for (let i = 0; i <= text.length; i++)
        for (const cuts of [[i], [i, Math.min(text.length, i + 3)]]) {
          const s = streamed(c, text, cuts);
          expect(s.content).toBe(final.content ?? "");
          expect(s.reasoning).toBe(final.reasoning ?? "");
          expect(s.toolCalls).toEqual(final.toolCalls);
        }
    });
});
