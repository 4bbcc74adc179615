// The Anthropic Messages adapter, pure: request parsing (every block kind, tool results, tools and
// tool_choice, refusals), the body, and the streamed events, which @anthropic-ai/sdk's own
// MessageStream accumulates back into the body. The real clients also read both through a fake fetch.
import { createAnthropic } from "@ai-sdk/anthropic";
import Anthropic from "@anthropic-ai/sdk";
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import type { ApiRequest, SseEvent } from "./api.js";
import { messagesApi } from "./messages-wire.js";
import { parseReply } from "./reply.js";
import type { GatewayCall, GatewayCompletion, ParsedReply } from "./types.js";

const base = { model: "coder", max_tokens: 64 };

function parse(body: object): ApiRequest {
  const r = messagesApi.parse(body);
  if ("error" in r) throw new Error(r.error.message);
  return r.request;
}
function refuse(body: object) {
  const r = messagesApi.parse(body);
  if (!("error" in r)) throw new Error("expected a 400");
  expect(r.error.status).toBe(400);
  return r.error;
}
const user = (content: unknown) => ({ ...base, messages: [{ role: "user", content }] });

describe("messages request", () => {
  it("maps the basics; max_tokens may be absent", () => {
    const r = parse({
      ...base,
      messages: [{ role: "user", content: "hi" }],
      stop_sequences: ["END"],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stream: true,
    });
    expect(r.stream).toBe(true);
    expect(r.call).toEqual({
      api: "messages",
      role: "coder",
      messages: [{ role: "user", content: "hi" }],
      stop: ["END"],
      logprobs: false,
      temperature: 0.5,
      topP: 0.9,
      maxTokens: 64,
    });
    expect(parse({ model: "coder", messages: [{ role: "user", content: "hi" }] }).call.maxTokens).toBeUndefined();
  });

  it("takes the system prompt as a string or text blocks", () => {
    expect(parse({ ...user("q"), system: "be brief" }).call.messages[0]).toEqual({ role: "system", content: "be brief" });
    const blocks = [
      { type: "text", text: "be brief" },
      { type: "text", text: "be right", cache_control: { type: "ephemeral" } },
    ];
    expect(parse({ ...user("q"), system: blocks }).call.messages[0]).toEqual({ role: "system", content: "be brief\n\nbe right" });
    expect(parse({ ...user("q"), system: "" }).call.messages).toEqual([{ role: "user", content: "q" }]);
  });

  it("splits tool results out of a user turn, in order, text after them", () => {
    const r = parse({
      ...base,
      messages: [
        { role: "user", content: [{ type: "text", text: "add" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hm", signature: "sig" },
            { type: "redacted_thinking", data: "xx" },
            { type: "text", text: "Let me " },
            { type: "text", text: "add." },
            { type: "tool_use", id: "t1", name: "add", input: { a: 1 }, cache_control: { type: "ephemeral" } },
            { type: "tool_use", id: "t2", name: "add", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "1" },
            { type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "0" }], is_error: true },
            { type: "text", text: "and now?", cache_control: { type: "ephemeral" } },
          ],
        },
        { role: "assistant", content: "" },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t3" }] },
      ],
    });
    expect(r.call.messages).toEqual([
      { role: "user", content: "add" },
      {
        role: "assistant",
        content: "Let me add.",
        toolCalls: [
          { id: "t1", name: "add", arguments: '{"a":1}' },
          { id: "t2", name: "add", arguments: "{}" },
        ],
      },
      { role: "tool", toolCallId: "t1", content: "1" },
      { role: "tool", toolCallId: "t2", content: "0" },
      { role: "user", content: "and now?" },
      { role: "assistant", content: "" },
      { role: "tool", toolCallId: "t3", content: "" },
    ]);
  });

  it("takes a mid-conversation system turn as a system message", () => {
    const r = parse({
      ...base,
      messages: [
        { role: "user", content: "a" },
        { role: "system", content: [{ type: "text", text: "now terse" }] },
      ],
    });
    expect(r.call.messages.at(-1)).toEqual({ role: "system", content: "now terse" });
  });

  it("refuses media and server blocks, naming the block", () => {
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } };
    expect(refuse(user([{ type: "text", text: "see" }, image])).param).toBe("messages.0.content.1");
    expect(refuse(user([{ type: "document", source: {} }])).message).toMatch(/'document'.*only text and tool results/);
    expect(refuse(user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "search_result" }] }])).param).toBe(
      "messages.0.content.0.content.0",
    );
    expect(
      refuse({ ...base, messages: [{ role: "assistant", content: [{ type: "server_tool_use", id: "s", name: "web_search", input: {} }] }] })
        .param,
    ).toBe("messages.0.content.0");
    expect(refuse(user([{ type: "tool_result" }])).param).toBe("messages.0.content.0");
    expect(refuse(user([{ type: "tool_result", tool_use_id: "t" }, { type: "text" }])).param).toBe("messages.0.content.1");
    expect(
      refuse({ ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: "x" }] }] }).param,
    ).toBe("messages.0.content.0");
  });

  it("maps client tools and tool_choice", () => {
    const add = { name: "add", description: "adds", input_schema: { type: "object", properties: { a: { type: "number" } } } };
    const tools = [
      add,
      { ...add, name: "sub", type: "custom", cache_control: { type: "ephemeral" }, strict: true, eager_input_streaming: true },
    ];
    const r = parse({ ...user("q"), tools, tool_choice: { type: "auto" } });
    expect(r.call.tools).toEqual([
      { type: "function", function: { name: "add", description: "adds", parameters: add.input_schema } },
      { type: "function", function: { name: "sub", description: "adds", parameters: add.input_schema, strict: true } },
    ]);
    expect(r.call.toolChoice).toBe("auto");
    expect(r.call.parallelToolCalls).toBeUndefined();
    const choice = (tool_choice: object) => parse({ ...user("q"), tools, tool_choice }).call;
    expect(choice({ type: "any", disable_parallel_tool_use: true })).toMatchObject({ toolChoice: "required", parallelToolCalls: false });
    expect(choice({ type: "tool", name: "sub" }).toolChoice).toEqual({ type: "function", function: { name: "sub" } });
    expect(choice({ type: "none" }).toolChoice).toBe("none");
    expect(refuse({ ...user("q"), tools, tool_choice: { type: "tool", name: "mul" } }).param).toBe("tool_choice.name");
    expect(refuse({ ...user("q"), tools, tool_choice: { type: "sometimes" } }).param).toBe("tool_choice.type");
  });

  it("refuses server tools and malformed client tools, naming them", () => {
    const e = refuse({ ...user("q"), tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }] });
    expect(e).toMatchObject({ param: "tools.0.type", code: "unsupported_tool" });
    expect(e.message).toContain("web_search_20250305");
    for (const type of ["bash_20250124", "text_editor_20250728", "computer_20250124"])
      expect(refuse({ ...user("q"), tools: [{ type, name: "x" }] }).message).toContain(type);
    expect(refuse({ ...user("q"), tools: [{ name: "add" }] }).param).toBe("tools.0");
  });

  it("reads maso labels from metadata, by chat's rules", () => {
    const r = parse({ ...user("q"), metadata: { user_id: "u1", maso_node: "solver", maso_turn: "2" } });
    expect(r.call).toMatchObject({ node: "solver", turn: 2 });
    expect(refuse({ ...user("q"), metadata: { maso_turn: -1 } }).param).toBe("metadata");
    expect(refuse({ ...user("q"), metadata: { maso_node: "a b" } }).message).toMatch(/maso_node/);
  });

  it("accepts fields that change nothing, refuses unknown ones and MCP servers", () => {
    const r = parse({
      ...user("q"),
      thinking: { type: "enabled", budget_tokens: 2048 },
      service_tier: "auto",
      container: "c1",
      context_management: { edits: [] },
      cache_control: { type: "ephemeral" },
      output_config: { effort: "low" },
    });
    expect(r.call.responseFormat).toBeUndefined();
    for (const thinking of [{ type: "disabled" }, { type: "adaptive" }]) parse({ ...user("q"), thinking });
    const e = refuse({ ...user("q"), frequency_penalty: 1 });
    expect(e.param).toBe("frequency_penalty");
    expect(e.message).toContain("'frequency_penalty'");
    expect(refuse({ ...user("q"), mcp_servers: [{ type: "url", url: "http://x", name: "x" }] }).param).toBe("mcp_servers");
    expect(refuse({ ...user("q"), temperature: 1.5 }).param).toBe("temperature");
    expect(refuse({ ...base, messages: [] }).param).toBe("messages");
    expect(refuse({ ...base, messages: [{ role: "tool", content: "x" }] }).param).toBe("messages.0.role");
  });

  it("takes output_config.format as a JSON-schema response format", () => {
    const schema = { type: "object", properties: { n: { type: "number" } } };
    const r = parse({ ...user("q"), output_config: { format: { type: "json_schema", schema } } });
    expect(r.call.responseFormat).toEqual({ type: "json_schema", json_schema: { name: "output_config.format", schema } });
  });
});

const callOf = (over: Partial<GatewayCall> = {}): GatewayCall => ({
  episodeId: "e",
  api: "messages",
  role: "coder",
  messages: [{ role: "user", content: "q" }],
  stop: [],
  logprobs: false,
  ...over,
});
const completionOf = (text: string, over: Partial<GatewayCompletion> = {}): GatewayCompletion => ({
  callId: "e-0",
  text,
  promptTokens: 7,
  outputTokens: 5,
  finishReason: "stop",
  ...over,
});
const tools = [{ type: "function" as const, function: { name: "add", parameters: { type: "object" } } }];
const toolText = '<think>\nadding\n</think>\n\nLet me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 2}}\n</tool_call>';

describe("messages body", () => {
  it("is a message with a text block, end_turn and usage", () => {
    const call = callOf();
    const c = completionOf("Hello");
    expect(messagesApi.body(call, c, parseReply(call, c))).toEqual({
      id: "msg_e-0",
      type: "message",
      role: "assistant",
      model: "coder",
      content: [{ type: "text", text: "Hello" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      stop_details: null,
      usage: { input_tokens: 7, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it("puts thinking, text and tool_use blocks in order, stop_reason tool_use", () => {
    const call = callOf({ tools });
    const c = completionOf(toolText);
    const b = messagesApi.body(call, c, parseReply(call, c)) as { content: unknown; stop_reason: string };
    expect(b.content).toEqual([
      { type: "thinking", thinking: "adding", signature: "" },
      { type: "text", text: "Let me add." },
      { type: "tool_use", id: "call_e-0_0", name: "add", input: { a: 2 } },
    ]);
    expect(b.stop_reason).toBe("tool_use");
  });

  it("says max_tokens, stop_sequence (only for a requested one), and sends no empty thinking", () => {
    const stopOf = (call: GatewayCall, c: GatewayCompletion) => {
      const b = messagesApi.body(call, c, parseReply(call, c)) as { content: unknown; stop_reason: string; stop_sequence: unknown };
      return [b.stop_reason, b.stop_sequence, b.content];
    };
    expect(stopOf(callOf(), completionOf("Hel", { finishReason: "length" }))[0]).toBe("max_tokens");
    expect(stopOf(callOf({ stop: ["END"] }), completionOf("Hi", { stopString: "END" }))).toEqual([
      "stop_sequence",
      "END",
      [{ type: "text", text: "Hi" }],
    ]);
    expect(stopOf(callOf(), completionOf("Hi", { stopString: "<|im_end|>" }))[0]).toBe("end_turn");
    expect(stopOf(callOf(), completionOf("<think>\n\n</think>\n\n"))).toEqual(["end_turn", null, []]);
  });

  it("shapes errors as Anthropic's, with its error types", () => {
    const e = (status: 400 | 401 | 404 | 413 | 429 | 500 | 503, type: "invalid_request_error" | "server_error" = "invalid_request_error") =>
      (messagesApi.errorBody({ status, type, code: "x", message: "m" }) as { error: { type: string } }).error.type;
    expect(messagesApi.errorBody({ status: 401, type: "authentication_error", code: "x", message: "no key" })).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "no key" },
    });
    expect([e(400), e(413), e(500, "server_error"), e(503, "server_error")]).toEqual([
      "invalid_request_error",
      "request_too_large",
      "api_error",
      "overloaded_error",
    ]);
  });
});

/** The events for a reply, as the route sends them: the pieces as they decode (or none), then finish. */
function eventsOf(call: GatewayCall, c: GatewayCompletion, r: ParsedReply, pieces: "streamed" | "none" | "half"): SseEvent[] {
  const w = messagesApi.stream(call, c.callId, { call, stream: true });
  const out = [...w.start()];
  if (pieces === "streamed" || pieces === "half") {
    for (const ch of (r.reasoning ?? "").match(/.{1,3}/gs) ?? []) out.push(...w.reasoning(ch));
    const text = r.content ?? "";
    const sent = pieces === "half" ? text.slice(0, text.length >> 1) : text;
    for (const ch of sent.match(/.{1,4}/gs) ?? []) out.push(...w.text(ch));
    if (pieces === "streamed") for (const [i, t] of r.toolCalls.entries()) out.push(...w.toolCall(i, t));
  }
  return [...out, ...w.finish(c, r)];
}

async function accumulate(events: SseEvent[]) {
  const lines = `${events.map((e) => e.data).join("\n")}\n`;
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
  // parsed_output is the SDK's own (structured-output parsing), not on the wire
  const { parsed_output, ...message } = await MessageStream.fromReadableStream(body).finalMessage();
  return message;
}

describe("messages stream", () => {
  const call = callOf({ tools });
  const c = completionOf(toolText);
  const r = parseReply(call, c);

  it("sends typed events with consistent block indexes", () => {
    const events = eventsOf(call, c, r, "streamed");
    const data = events.map((e) => JSON.parse(e.data) as { type: string; index?: number; delta?: { type: string } });
    for (const [i, e] of events.entries()) expect(e.event).toBe(data[i].type);
    expect(data[0]).toMatchObject({
      type: "message_start",
      message: { id: "msg_e-0", content: [], stop_reason: null, usage: { input_tokens: 0 } },
    });
    expect(data.slice(-2).map((d) => d.type)).toEqual(["message_delta", "message_stop"]);
    expect(data.at(-2)).toMatchObject({
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 7, output_tokens: 5 },
    });
    // each block: start, deltas, stop, with indexes 0, 1, 2 in turn
    let index = -1;
    let open = false;
    for (const d of data.slice(1, -2)) {
      if (d.type === "content_block_start") {
        expect(open).toBe(false);
        expect(d.index).toBe(++index);
        open = true;
      } else {
        expect(open).toBe(true);
        expect(d.index).toBe(index);
        if (d.type === "content_block_stop") open = false;
      }
    }
    expect([index, open]).toEqual([2, false]);
    expect(data.filter((d) => d.delta?.type === "signature_delta")).toHaveLength(1);
  });

  it("accumulates (as the SDK's MessageStream does) to the body, however much was streamed", async () => {
    const body = messagesApi.body(call, c, r);
    for (const pieces of ["streamed", "none", "half"] as const) expect(await accumulate(eventsOf(call, c, r, pieces))).toEqual(body);
    const plain = callOf({ stop: ["END"] });
    const p = completionOf("just text", { stopString: "END" });
    expect(await accumulate(eventsOf(plain, p, parseReply(plain, p), "streamed"))).toEqual(
      messagesApi.body(plain, p, parseReply(plain, p)),
    );
  });

  it("sends an error event", () => {
    const w = messagesApi.stream(call, "e-0", { call, stream: true });
    const [e] = w.error({ status: 503, type: "server_error", code: "x", message: "busy" });
    expect(e.event).toBe("error");
    expect(JSON.parse(e.data)).toEqual({ type: "error", error: { type: "overloaded_error", message: "busy" } });
  });
});

/**
 * A fetch that answers /messages as the gateway would, with a scripted model: what the real clients
 * send is parsed by the adapter, and what it answers is read by them.
 */
function fakeFetch(script: (call: GatewayCall) => string, seen: GatewayCall[]): typeof fetch {
  return async (_url, init) => {
    const parsed = messagesApi.parse(JSON.parse(String(init?.body)));
    if ("error" in parsed) return Response.json(messagesApi.errorBody(parsed.error), { status: parsed.error.status });
    const call = { ...parsed.request.call, episodeId: "e" };
    seen.push(call);
    const c = completionOf(script(call), { callId: `e-${seen.length}` });
    const r = parseReply(call, c);
    if (!parsed.request.stream) return Response.json(messagesApi.body(call, c, r));
    const sse = eventsOf(call, c, r, "streamed").map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`);
    return new Response(sse.join(""), { headers: { "content-type": "text/event-stream" } });
  };
}

const script = (call: GatewayCall) => {
  const last = call.messages.at(-1)!;
  if (last.role === "tool") return `The sum is ${last.content}.`;
  if (call.tools && call.toolChoice !== "none") return 'Adding.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>';
  return `echo: ${last.content}`;
};

describe("the real clients read these shapes", () => {
  it("@anthropic-ai/sdk: create, a tool round trip, stream().finalMessage()", async () => {
    const seen: GatewayCall[] = [];
    const client = new Anthropic({ baseURL: "http://gateway", apiKey: "k", fetch: fakeFetch(script, seen), maxRetries: 0 });
    const m = await client.messages.create({ model: "coder", max_tokens: 32, messages: [{ role: "user", content: "hi" }] });
    expect(m.content).toEqual([{ type: "text", text: "echo: hi" }]);
    const add: Anthropic.Tool = { name: "add", input_schema: { type: "object", properties: { a: { type: "number" } } } };
    const first = await client.messages.create({
      model: "coder",
      max_tokens: 32,
      tools: [add],
      messages: [{ role: "user", content: "2+3" }],
    });
    const use = first.content.find((b) => b.type === "tool_use")!;
    expect(use).toMatchObject({ name: "add", input: { a: 2, b: 3 } });
    const stream = client.messages.stream({
      model: "coder",
      max_tokens: 32,
      tools: [add],
      messages: [
        { role: "user", content: "2+3" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "5" }] },
      ],
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: "text", text: "The sum is 5." }]);
    expect(final.usage).toMatchObject({ input_tokens: 7, output_tokens: 5 });
    expect(seen[2].messages.at(-1)).toEqual({ role: "tool", toolCallId: use.id, content: "5" });
    await expect(client.messages.create({ model: "coder", max_tokens: 8, messages: [] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });

  it("@ai-sdk/anthropic: generateText with a tool, streamText", async () => {
    const seen: GatewayCall[] = [];
    const model = createAnthropic({ baseURL: "http://gateway", apiKey: "k", fetch: fakeFetch(script, seen) })("coder");
    const add = tool({
      description: "adds",
      inputSchema: jsonSchema<{ a: number; b: number }>({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } } }),
      execute: async ({ a, b }) => String(a + b),
    });
    const r = await generateText({ model, prompt: "2+3", tools: { add }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe("The sum is 5.");
    expect(r.steps[0].toolCalls[0]).toMatchObject({ toolName: "add", input: { a: 2, b: 3 } });
    expect(r.steps[0].finishReason).toBe("tool-calls");
    const s = streamText({ model, system: "be brief", prompt: "a poem", tools: { add }, toolChoice: "none", maxRetries: 0 });
    let text = "";
    for await (const part of s.textStream) text += part;
    expect(text).toBe("echo: a poem");
    expect((await s.usage).inputTokens).toBe(7);
    expect(seen.at(-1)).toMatchObject({
      maxTokens: 4096,
      toolChoice: "none",
      messages: [{ role: "system", content: "be brief" }, { role: "user" }],
    });
  });
});
