// The OpenAI Responses adapter without a server: request parsing (items, folding, tools, formats,
// 400s), withPrevious, the response body, and the stream's events, checked with the openai SDK's own
// strict stream accumulator. Pure; the SDK round trips are in test/gateway/responses-sdks.int.test.ts.

import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import type { ApiRequest, SseEvent } from "./api.js";
import { parseReply } from "./reply.js";
import { parseResponsesRequest, responsesApi, responsesBody, responsesStream, withPrevious } from "./responses-wire.js";
import type { GatewayCall, GatewayCompletion, GatewayMessage, ParsedReply } from "./types.js";

const ok = (raw: object): ApiRequest => {
  const r = parseResponsesRequest(raw);
  if ("error" in r) throw new Error(r.error.message);
  return r.request;
};
const err = (raw: object) => {
  const r = parseResponsesRequest(raw);
  if (!("error" in r)) throw new Error("expected a 400");
  return r.error;
};
const callOf = (raw: object): GatewayCall => ({ ...ok(raw).call, episodeId: "e" });
const completion = (text: string, extra: Partial<GatewayCompletion> = {}): GatewayCompletion => ({
  callId: "c7",
  text,
  promptTokens: 11,
  outputTokens: 5,
  finishReason: "stop",
  ...extra,
});
const addTool = { type: "function", name: "add", description: "adds", parameters: { type: "object" }, strict: false };
const patchTool = {
  type: "custom",
  name: "apply_patch",
  description: "patch files",
  format: { type: "grammar", syntax: "lark", definition: "x" },
};

describe("parseResponsesRequest", () => {
  it("takes a string input as one user message, instructions as the system message before it", () => {
    const r = ok({ model: "coder", instructions: "be brief", input: "hi", stream: true });
    expect(r.stream).toBe(true);
    expect(r.call).toMatchObject({ api: "responses", role: "coder", stop: [], logprobs: false });
    expect(r.call.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ]);
    expect(r.call.maxTokens).toBeUndefined();
  });

  it("normalises message items: developer → system, text parts joined, type optional", () => {
    const r = ok({
      model: "coder",
      input: [
        { role: "developer", content: "rules" },
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "a" },
            { type: "input_text", text: "b" },
          ],
        },
        {
          type: "message",
          role: "assistant",
          id: "msg_x",
          status: "completed",
          content: [{ type: "output_text", text: "ok", annotations: [] }],
        },
        { role: "system", content: "more" },
      ],
    });
    expect(r.call.messages).toEqual([
      { role: "system", content: "rules" },
      { role: "user", content: "ab" },
      { role: "assistant", content: "ok" },
      { role: "system", content: "more" },
    ]);
  });

  it("folds an assistant message, reasoning and the call items after it into ONE assistant turn", () => {
    const r = ok({
      model: "coder",
      tools: [addTool],
      input: [
        { role: "user", content: "2+3?" },
        { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "hm" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me add." }] },
        { type: "reasoning", id: "rs_2", summary: [] },
        { type: "function_call", id: "fc_call_1_0", call_id: "call_1_0", name: "add", arguments: '{"a":2}', status: "completed" },
        { type: "function_call", call_id: "call_1_1", name: "add", arguments: '{"a":3}' },
        { type: "function_call_output", call_id: "call_1_0", output: "2" },
        { type: "function_call_output", call_id: "call_1_1", output: [{ type: "input_text", text: "3" }] },
        { type: "function_call", call_id: "call_2_0", name: "add", arguments: "{}" },
        { type: "function_call_output", call_id: "call_2_0", output: "0" },
      ],
    });
    expect(r.call.messages).toEqual([
      { role: "user", content: "2+3?" },
      {
        role: "assistant",
        content: "Let me add.",
        toolCalls: [
          { id: "call_1_0", name: "add", arguments: '{"a":2}' },
          { id: "call_1_1", name: "add", arguments: '{"a":3}' },
        ],
      },
      { role: "tool", content: "2", toolCallId: "call_1_0" },
      { role: "tool", content: "3", toolCallId: "call_1_1" },
      // calls with no assistant message before them: a turn with empty content
      { role: "assistant", content: "", toolCalls: [{ id: "call_2_0", name: "add", arguments: "{}" }] },
      { role: "tool", content: "0", toolCallId: "call_2_0" },
    ]);
  });

  it("maps custom tools to one-string functions and their calls/outputs to custom tool calls", () => {
    const r = ok({
      model: "coder",
      tools: [addTool, patchTool],
      tool_choice: { type: "custom", name: "apply_patch" },
      input: [
        { role: "user", content: "fix it" },
        { type: "custom_tool_call", call_id: "call_9_0", name: "apply_patch", input: "*** Begin Patch" },
        { type: "custom_tool_call_output", call_id: "call_9_0", output: "done" },
      ],
    });
    expect(r.call.tools).toEqual([
      { type: "function", function: { name: "add", description: "adds", parameters: { type: "object" }, strict: false } },
      {
        type: "function",
        function: {
          name: "apply_patch",
          description: "patch files",
          parameters: { type: "object", properties: { input: { type: "string" } }, required: ["input"] },
        },
        custom: true,
      },
    ]);
    expect(r.call.toolChoice).toEqual({ type: "function", function: { name: "apply_patch" } });
    expect(r.call.messages[1]).toEqual({
      role: "assistant",
      content: "",
      toolCalls: [{ id: "call_9_0", name: "apply_patch", arguments: JSON.stringify({ input: "*** Begin Patch" }), custom: true }],
    });
    expect(r.call.messages[2]).toEqual({ role: "tool", content: "done", toolCallId: "call_9_0" });
  });

  it("maps tool_choice, and refuses a named tool that is not in tools", () => {
    for (const c of ["none", "auto", "required"] as const)
      expect(ok({ model: "m", input: "x", tools: [addTool], tool_choice: c }).call.toolChoice).toBe(c);
    expect(ok({ model: "m", input: "x", tools: [addTool], tool_choice: { type: "function", name: "add" } }).call.toolChoice).toEqual({
      type: "function",
      function: { name: "add" },
    });
    expect(err({ model: "m", input: "x", tools: [addTool], tool_choice: { type: "function", name: "sub" } })).toMatchObject({
      status: 400,
      param: "tool_choice",
    });
    // a function named as custom (or the reverse) is not that tool
    expect(err({ model: "m", input: "x", tools: [addTool], tool_choice: { type: "custom", name: "add" } }).param).toBe("tool_choice");
    expect(err({ model: "m", input: "x", tool_choice: { type: "web_search" } }).param).toMatch(/^tool_choice/);
  });

  it("maps text.format to the chat response format", () => {
    expect(ok({ model: "m", input: "x", text: { format: { type: "text" }, verbosity: "low" } }).call.responseFormat).toBeUndefined();
    expect(ok({ model: "m", input: "x", text: {} }).call.responseFormat).toBeUndefined();
    expect(ok({ model: "m", input: "x", text: { format: { type: "json_object" } } }).call.responseFormat).toEqual({ type: "json_object" });
    const schema = { type: "object", properties: { a: { type: "number" } } };
    expect(
      ok({ model: "m", input: "x", text: { format: { type: "json_schema", name: "ans", schema, strict: true, description: "d" } } }).call
        .responseFormat,
    ).toEqual({ type: "json_schema", json_schema: { name: "ans", schema, strict: true } });
  });

  it("maps sampling options, logprobs, labels and previous_response_id", () => {
    const r = ok({
      model: "m",
      input: "x",
      temperature: 0.5,
      top_p: 0.9,
      max_output_tokens: 64,
      parallel_tool_calls: false,
      include: ["message.output_text.logprobs", "reasoning.encrypted_content"],
      top_logprobs: 3,
      metadata: { maso_node: "plan", maso_turn: "2", other: "x" },
      previous_response_id: "resp_c1",
    });
    expect(r.call).toMatchObject({ temperature: 0.5, topP: 0.9, maxTokens: 64, logprobs: true, topLogprobs: 3, node: "plan", turn: 2 });
    expect(r.previousResponseId).toBe("resp_c1");
    expect(err({ model: "m", input: "x", metadata: { maso_turn: "two" } }).param).toBe("metadata");
  });

  it("accepts what the SDKs send by default (Codex, @openai/agents, the AI SDK, LangChain)", () => {
    // Codex CLI
    ok({
      model: "coder",
      instructions: "You are Codex.",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
      tools: [addTool, patchTool],
      tool_choice: "auto",
      parallel_tool_calls: false,
      reasoning: { effort: "medium", summary: "auto" },
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "abc",
      text: { verbosity: "medium" },
    });
    // @openai/agents (undefined fields are dropped by JSON; include is [] when no hosted tool asks)
    ok({ model: "coder", instructions: "x", input: [{ role: "user", content: "hi" }], include: [], tools: [], stream: false });
    // AI SDK; LangChain sends an empty text object and null-ish options
    ok({
      model: "coder",
      input: [
        { role: "system", content: "s" },
        { role: "user", content: [{ type: "input_text", text: "hi" }] },
      ],
    });
    ok({
      model: "coder",
      input: "hi",
      text: {},
      user: "u",
      service_tier: "auto",
      truncation: "disabled",
      background: false,
      stream_options: {},
    });
  });

  it("offers a namespace's tools in its place and leaves out hosted tools no model here can use (Codex's defaults)", () => {
    const r = parseResponsesRequest({
      model: "m",
      input: "x",
      client_metadata: { a: "b" },
      tools: [
        addTool,
        { type: "web_search", external_web_access: true },
        { type: "namespace", name: "ns", tools: [{ ...addTool, name: "spawn" }] },
      ],
    });
    if ("error" in r) throw new Error(r.error.message);
    expect(r.request.call.tools?.map((t) => t.function.name)).toEqual(["add", "spawn"]);
  });

  it("answers unknown fields and unsupported values with a 400 naming the field", () => {
    expect(err({ model: "m", input: "x", frobnicate: 1 })).toMatchObject({ status: 400, param: "frobnicate" });
    expect(err({ model: "m", input: "x", text: { format: { type: "text" }, shape: 1 } }).message).toContain("shape");
    expect(err({ model: "m", input: "x", tools: [addTool, { type: "computer_2099" }] })).toMatchObject({
      param: "tools.1.type",
      message: expect.stringContaining("computer_2099"),
    });
    expect(err({ model: "m", input: "x", conversation: "conv_1" }).param).toBe("conversation");
    expect(err({ model: "m", input: "x", background: true }).param).toBe("background");
    expect(err({ model: "m", input: "x", prompt: { id: "pmpt_1" } }).param).toBe("prompt");
    expect(err({ model: "m", input: "x", include: ["nonsense"] }).param).toMatch(/^include/);
    expect(err({ model: "m", input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] })).toMatchObject({
      param: "input.0.content",
      message: expect.stringContaining("only text"),
    });
    expect(
      err({ model: "m", input: [{ type: "function_call_output", call_id: "c", output: [{ type: "input_file", file_id: "f" }] }] }).param,
    ).toBe("input.0.output");
    expect(err({ model: "m", input: [{ type: "web_search_call", id: "ws_1" }] }).param).toBe("input.0.type");
    expect(err({ model: "m", input: [{ type: "function_call", call_id: "c", name: "f" }] }).param).toBe("input.0.arguments");
    expect(err({ model: "m" }).param).toBe("input");
    expect(err({ input: "x" }).param).toBe("model");
  });

  it("resolves item references to maso's own output through previous_response_id", () => {
    // the AI SDK (store defaults to true) replays earlier assistant text as a reference
    const r = ok({
      model: "coder",
      tools: [addTool],
      input: [
        { role: "system", content: "sys" },
        { role: "user", content: [{ type: "input_text", text: "2+3?" }] },
        { type: "item_reference", id: "rs_ep-0" },
        { type: "item_reference", id: "msg_ep-0" },
        { type: "function_call", call_id: "call_ep-0_0", name: "add", arguments: "{}" },
        { type: "function_call_output", call_id: "call_ep-0_0", output: "5" },
      ],
    });
    expect(r.previousResponseId).toBe("resp_ep-0");
    expect(r.call.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "tool", content: "5", toolCallId: "call_ep-0_0" },
    ]);
    expect(
      ok({
        model: "m",
        input: [
          { role: "user", content: "x" },
          { type: "item_reference", id: "rs_1" },
        ],
      }).previousResponseId,
    ).toBeUndefined();
    expect(err({ model: "m", input: [{ type: "item_reference", id: "abc" }] }).param).toBe("input.0");
    expect(err({ model: "m", previous_response_id: "resp_1", input: [{ id: "msg_1" }] }).param).toBe("input.0");
  });
});

describe("withPrevious", () => {
  it("puts the earlier conversation after the call's instructions and before its new input", () => {
    const earlier: GatewayMessage[] = [
      { role: "system", content: "old instructions" },
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
    ];
    const call = callOf({ model: "m", instructions: "new", input: "q2" });
    expect(withPrevious(call, earlier).messages).toEqual([
      { role: "system", content: "new" },
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
      { role: "user", content: "q2" },
    ]);
    expect(withPrevious(callOf({ model: "m", input: "q2" }), earlier).messages.map((m) => m.content)).toEqual(["q1", "a1", "q2"]);
  });
});

const call = callOf({ model: "coder", instructions: "be brief", tools: [addTool, patchTool], input: "go", metadata: { maso_turn: 1 } });
const TEXT = `<think>\nhm\n</think>\n\nLet me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 2}}\n</tool_call>\n<tool_call>\n{"name": "apply_patch", "arguments": {"input": "*** Begin"}}\n</tool_call>`;

describe("responsesBody", () => {
  it("lists reasoning, the message and each tool call as output items, with usage", () => {
    const c = completion(TEXT);
    const b = responsesBody(call, c, parseReply(call, c));
    expect(b).toMatchObject({
      id: "resp_c7",
      object: "response",
      status: "completed",
      model: "coder",
      error: null,
      incomplete_details: null,
      instructions: "be brief",
      tool_choice: "auto",
      parallel_tool_calls: true,
      metadata: { maso_turn: "1" },
      usage: {
        input_tokens: 11,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 16,
      },
    });
    expect(b.tools).toEqual([
      { type: "function", name: "add", description: "adds", parameters: { type: "object" }, strict: false },
      { type: "custom", name: "apply_patch", description: "patch files" },
    ]);
    expect(b.output).toEqual([
      { id: "rs_c7", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "hm" }] },
      {
        id: "msg_c7",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Let me add.", annotations: [] }],
      },
      { id: "fc_call_c7_0", type: "function_call", status: "completed", call_id: "call_c7_0", name: "add", arguments: '{"a":2}' },
      { id: "ctc_call_c7_1", type: "custom_tool_call", status: "completed", call_id: "call_c7_1", name: "apply_patch", input: "*** Begin" },
    ]);
  });

  it("is incomplete when generation hit max_output_tokens, and carries log-probs when asked", () => {
    const lp = callOf({ model: "coder", input: "go", include: ["message.output_text.logprobs"] });
    const c = completion("Hé", { finishReason: "length", logprobs: [{ token: "Hé", logprob: -0.5 }] });
    const b = responsesBody(lp, c, parseReply(lp, c));
    expect(b).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect(b.output[0]).toMatchObject({
      status: "incomplete",
      content: [{ text: "Hé", logprobs: [{ token: "Hé", logprob: -0.5, bytes: [72, 195, 169], top_logprobs: [] }] }],
    });
  });

  it("answers errors in OpenAI's shape", () => {
    expect(
      responsesApi.errorBody({ status: 400, type: "invalid_request_error", code: "invalid_request", message: "no", param: "input" }),
    ).toEqual({
      error: { message: "no", type: "invalid_request_error", param: "input", code: "invalid_request" },
    });
  });
});

/** Replays events through the openai SDK's strict accumulator (it throws on an inconsistent stream). */
function replay(events: SseEvent[]) {
  const parsed = events.map((e) => ({ name: e.event, data: JSON.parse(e.data) as ResponseStreamEvent & { sequence_number: number } }));
  let snapshot: ReturnType<typeof accumulateResponse> | undefined;
  for (const { data } of parsed) snapshot = accumulateResponse(data, snapshot);
  return { parsed, snapshot: snapshot! };
}

function streamOf(c: GatewayCompletion, pieces: (w: ReturnType<typeof responsesStream>) => SseEvent[][], r?: ParsedReply) {
  const w = responsesStream(call, c.callId);
  const events = [w.start(), ...pieces(w), w.finish(c, r ?? parseReply(call, c))].flat();
  return { events, ...replay(events) };
}

describe("responsesStream", () => {
  const c = completion(TEXT);
  const decode = (w: ReturnType<typeof responsesStream>) => {
    const reply = parseReply(call, c);
    return [
      w.reasoning("h"),
      w.reasoning("m\n"),
      w.text("\n\nLet "),
      w.text("me add.\n"),
      w.toolCall(0, reply.toolCalls[0]),
      w.text("\n"),
      w.toolCall(1, reply.toolCalls[1]),
    ];
  };

  it("writes a consistent event sequence that ends with the body", () => {
    const { parsed, snapshot } = streamOf(c, decode);
    expect(parsed.map((e) => e.data.sequence_number)).toEqual(parsed.map((_, i) => i));
    for (const e of parsed) expect(e.name).toBe(e.data.type);
    expect(parsed.map((e) => e.data.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const created = parsed[0].data as { response: { status: string; output: unknown[]; id: string } };
    expect(created.response).toMatchObject({ id: "resp_c7", status: "in_progress", output: [] });
    // the deltas of each item carry its id and index
    for (const e of parsed) {
      const d = e.data as { item_id?: string; output_index?: number };
      if (d.item_id !== undefined) expect((snapshot.output[d.output_index!] as { id: string }).id).toBe(d.item_id);
    }
    // whitespace the final (trimmed) texts drop never went out: the deltas add up to the done texts
    const joined = (type: string) =>
      parsed
        .filter((e) => e.data.type === type)
        .map((e) => (e.data as { delta: string }).delta)
        .join("");
    expect(joined("response.reasoning_text.delta")).toBe("hm");
    expect(joined("response.output_text.delta")).toBe("Let me add.");
    expect((parsed[13].data as { text: string }).text).toBe("Let me add.");
    const done = parsed.at(-1)!.data as unknown as { response: ReturnType<typeof responsesBody> };
    const body = responsesBody(call, c, parseReply(call, c));
    expect({ ...done.response, created_at: 0, completed_at: 0 }).toEqual({ ...body, created_at: 0, completed_at: 0 });
    // what the events built is what the final response says
    expect(snapshot.output).toEqual(body.output);
  });

  it("sends a reply that never streamed whole before closing (a backend with no deltas)", () => {
    const { parsed, snapshot } = streamOf(c, () => []);
    const types = parsed.map((e) => e.data.type);
    expect(types.filter((t) => t === "response.output_item.added")).toHaveLength(4);
    expect(snapshot.output).toEqual(responsesBody(call, c, parseReply(call, c)).output);
    expect(snapshot.status).toBe("completed");
  });

  it("closes with the reply's final text and ends incomplete at the token limit", () => {
    const short = completion("Hello wor", { finishReason: "length" });
    const { parsed, snapshot } = streamOf(short, (w) => [w.text("Hello "), w.text("wor")]);
    expect(parsed.at(-1)!.data.type).toBe("response.incomplete");
    expect(snapshot).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect(snapshot.output_text).toBe("Hello wor");
  });

  it("passes text through unchanged when no tools are offered, and ends with the log-probs asked for", () => {
    const plain = callOf({ model: "coder", input: "go", include: ["message.output_text.logprobs"] });
    const c = completion(" a\n", {
      logprobs: [
        { token: " a", logprob: -1 },
        { token: "\n", logprob: -2 },
      ],
    });
    const w = responsesStream(plain, c.callId);
    const events = [w.start(), w.text(" a"), w.text("\n"), w.finish(c, parseReply(plain, c))].flat();
    const { parsed, snapshot } = replay(events);
    const deltas = parsed.filter((e) => e.data.type === "response.output_text.delta").map((e) => (e.data as { delta: string }).delta);
    expect(deltas).toEqual([" a", "\n"]);
    expect(snapshot.output).toEqual(responsesBody(plain, c, parseReply(plain, c)).output);
    expect(snapshot.output[0]).toMatchObject({ content: [{ text: " a\n", logprobs: [{ token: " a" }, { token: "\n" }] }] });
  });

  it("keeps text that follows a tool call in the final response (the reply has one message)", () => {
    const late = completion('Adding.\n<tool_call>{"name": "add", "arguments": {}}</tool_call>\nDone.');
    const reply = parseReply(call, late);
    const { snapshot, parsed } = streamOf(late, (w) => [w.text("Adding.\n"), w.toolCall(0, reply.toolCalls[0]), w.text("\nDone.")], reply);
    const done = parsed.at(-1)!.data as unknown as { response: ReturnType<typeof responsesBody> };
    expect(done.response.output.map((o) => o.type)).toEqual(["message", "function_call"]);
    expect(done.response.output[0]).toMatchObject({ content: [{ text: reply.content }] });
    expect(snapshot.status).toBe("completed");
  });

  it("reports an error, then the failed response", () => {
    const w = responsesStream(call, "c8");
    const events = [
      w.start(),
      w.text("Hi"),
      w.error({ status: 500, type: "server_error", code: "generation_failed", message: "boom" }),
    ].flat();
    const parsed = events.map((e) => JSON.parse(e.data));
    expect(parsed.at(-2)).toMatchObject({ type: "error", code: "generation_failed", message: "boom", param: null });
    expect(parsed.at(-1)).toMatchObject({
      type: "response.failed",
      response: { id: "resp_c8", status: "failed", error: { code: "server_error", message: "boom" } },
    });
    expect(parsed.map((e) => e.sequence_number)).toEqual(parsed.map((_, i) => i));
  });
});
