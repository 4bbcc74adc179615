// The gateway's Anthropic Messages API with the real clients, unmodified and in their default
// configuration: `@anthropic-ai/sdk` (a message, a tool round trip, `messages.stream()`, raw
// `stream: true` events, typed errors) and `@ai-sdk/anthropic` (generateText with a tool, streamText).
// The model is scripted (scripted-backend.ts) so tool calls are deterministic.
import { createAnthropic } from "@ai-sdk/anthropic";
import Anthropic from "@anthropic-ai/sdk";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayServer, serveGateway } from "../../src/gateway/serve.js";
import { scriptedBackend, toolCallText } from "./scripted-backend.js";

const backend = scriptedBackend(["coder", "planner"], (call, earlier) => {
  const last = call.messages.at(-1)!;
  if (last.role === "tool") return `The sum is ${last.content}.`;
  if (call.tools && call.toolChoice !== "none") return `<think>\nadding\n</think>\n\nLet me add.\n${toolCallText("add", { a: 2, b: 3 })}`;
  if (last.content.startsWith("think")) return `<think>\nhm, ${last.content}\n</think>\n\nanswer ${earlier.length}`;
  return `echo ${earlier.length}: ${last.content}`;
});

let g: GatewayServer;
/** The Anthropic SDK appends /v1/messages to its base URL: the server root, or an episode's. */
const anthropic = (episode: string, root = false) =>
  new Anthropic({ baseURL: root ? g.url : `${g.url}/episodes/${episode}`, apiKey: `sk-${episode}`, maxRetries: 0 });

const add: Anthropic.Tool = {
  name: "add",
  description: "adds two numbers",
  input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
};

beforeAll(async () => {
  for (const e of ["plain", "tools", "stream", "raw", "errors", "ai-tools", "ai-stream"]) backend.open(e);
  g = await serveGateway(backend);
});
afterAll(() => g.close());

describe("gateway with @anthropic-ai/sdk", () => {
  it("answers a plain message (x-api-key names the episode)", async () => {
    const m = await anthropic("plain", true).messages.create({
      model: "coder",
      max_tokens: 32,
      system: [{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "hello" }],
      stop_sequences: ["END"],
      metadata: { user_id: "u1" },
    });
    expect(m).toMatchObject({ id: "msg_plain-0", type: "message", role: "assistant", model: "coder", stop_reason: "end_turn" });
    expect(m.content).toEqual([{ type: "text", text: "echo 0: hello" }]);
    expect(m.usage).toMatchObject({ output_tokens: "echo 0: hello".length, input_tokens: "be brief".length + "hello".length });
    const [rec] = backend.episodes.get("plain")!;
    expect(rec.call).toMatchObject({ api: "messages", role: "coder", maxTokens: 32, stop: ["END"] });
    expect(rec.call.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hello" },
    ]);
  });

  it("round-trips a tool call: tool_use → tool_result → final answer", async () => {
    const client = anthropic("tools");
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "2 + 3?" }];
    const first = await client.messages.create({ model: "coder", max_tokens: 64, tools: [add], messages });
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use"]);
    const use = first.content.find((b) => b.type === "tool_use")!;
    expect(use).toMatchObject({ name: "add", input: { a: 2, b: 3 } });
    messages.push({ role: "assistant", content: first.content });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "5" }] });
    const second = await client.messages.create({ model: "coder", max_tokens: 64, tools: [add], messages });
    expect(second.content).toEqual([{ type: "text", text: "The sum is 5." }]);
    const recs = backend.episodes.get("tools")!;
    expect(recs[1].call.messages.slice(1)).toEqual([
      { role: "assistant", content: "Let me add.", toolCalls: [{ id: use.id, name: "add", arguments: '{"a":2,"b":3}' }] },
      { role: "tool", toolCallId: use.id, content: "5" },
    ]);
  });

  it("streams with messages.stream(): text events and a final message with thinking and tool_use", async () => {
    const client = anthropic("stream");
    const s = client.messages.stream({ model: "planner", max_tokens: 64, messages: [{ role: "user", content: "think of a plan" }] });
    let text = "";
    s.on("text", (d) => {
      text += d;
    });
    const final = await s.finalMessage();
    expect(text).toBe("answer 0");
    // the streamed reasoning keeps the whitespace inside <think>…</think>, which the body trims
    expect(final.content.map((b) => (b.type === "thinking" ? b.thinking.trim() : b.type === "text" ? b.text : b.type))).toEqual([
      "hm, think of a plan",
      "answer 0",
    ]);
    expect(final).toMatchObject({
      id: "msg_stream-0",
      stop_reason: "end_turn",
      usage: { output_tokens: backend.episodes.get("stream")![0].completion.outputTokens },
    });
    expect(final.usage.input_tokens).toBeGreaterThan(0);

    const t = await client.messages
      .stream({ model: "coder", max_tokens: 64, tools: [add], messages: [{ role: "user", content: "2 + 3?" }] })
      .finalMessage();
    expect(t.stop_reason).toBe("tool_use");
    expect(t.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(t.content.at(-1)).toMatchObject({ type: "tool_use", id: "call_stream-1_0", name: "add", input: { a: 2, b: 3 } });
  });

  it("sends raw events for stream: true", async () => {
    const events = await anthropic("raw").messages.create({
      model: "coder",
      max_tokens: 64,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const types: string[] = [];
    let text = "";
    for await (const e of events) {
      types.push(e.type);
      if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
      if (e.type === "message_delta") expect(e.delta.stop_reason).toBe("end_turn");
    }
    expect(text).toBe("echo 0: hi");
    expect(types[0]).toBe("message_start");
    expect(types.slice(1, 3)).toEqual(["content_block_start", "content_block_delta"]);
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
  });

  it("raises the SDK's typed errors", async () => {
    const client = anthropic("errors");
    const ask = (over: object) =>
      client.messages.create({ model: "coder", max_tokens: 8, messages: [{ role: "user", content: "x" }], ...over });
    await expect(ask({ model: "nobody" })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(ask({ tools: [{ type: "web_search_20250305", name: "web_search" }] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const e = await ask({ frobnicate: true }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(Anthropic.BadRequestError);
    expect((e as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error" },
    });
    const wrongKey = new Anthropic({ baseURL: `${g.url}/episodes/errors`, apiKey: "sk-nobody", maxRetries: 0 });
    await expect(
      wrongKey.messages.create({ model: "coder", max_tokens: 8, messages: [{ role: "user", content: "x" }] }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });
});

describe("gateway with @ai-sdk/anthropic", () => {
  // the AI SDK's provider appends /messages to its base URL
  const model = (episode: string, base: string) => createAnthropic({ baseURL: `${g.url}${base}`, apiKey: `sk-${episode}` })("coder");

  it("runs generateText with a tool to a final answer", async () => {
    const r = await generateText({
      model: model("ai-tools", "/episodes/ai-tools/v1"),
      prompt: "2 + 3?",
      tools: {
        add: tool({
          description: "adds two numbers",
          inputSchema: jsonSchema<{ a: number; b: number }>(add.input_schema as never),
          execute: async ({ a, b }) => String(a + b),
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(r.text).toBe("The sum is 5.");
    expect(r.steps[0].reasoningText).toBe("adding");
    expect(r.steps[0].toolCalls[0]).toMatchObject({ toolName: "add", input: { a: 2, b: 3 } });
    const recs = backend.episodes.get("ai-tools")!;
    expect(recs[0].call.maxTokens).toBe(4096); // the AI SDK's default for a model it does not know
    expect(recs[1].call.messages.at(-1)).toEqual({ role: "tool", toolCallId: recs[0].reply.toolCalls[0].id, content: "5" });
  });

  it("streams text with streamText", async () => {
    const s = streamText({ model: model("ai-stream", "/episodes/ai-stream"), system: "be brief", prompt: "a poem", maxRetries: 0 });
    let text = "";
    for await (const part of s.textStream) text += part;
    expect(text).toBe("echo 0: a poem");
    expect(await s.finishReason).toBe("stop");
    expect((await s.usage).outputTokens).toBe("echo 0: a poem".length);
  });
});
