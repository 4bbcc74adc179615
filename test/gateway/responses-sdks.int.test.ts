// The gateway's OpenAI Responses API (`/v1/responses`) with real SDKs in their default configuration:
// the `openai` client (plain, streamed, a function-call round trip, previous_response_id), @openai/agents
// `run()` (a handoff and a function tool, non-streamed and streamed) and the AI SDK's default `openai(…)`
// model (text, a multi-step tool call, streaming), and LangChain's `useResponsesApi`. The model is
// scripted (scripted-backend.ts).
import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import { generateText, stepCountIs, streamText, tool as aiTool } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { responseIdOf } from "../../src/gateway/api.js";
import { type GatewayServer, serveGateway } from "../../src/gateway/serve.js";
import type { GatewayMessage } from "../../src/gateway/types.js";
import { scriptedBackend, toolCallText } from "./scripted-backend.js";

const scripted = scriptedBackend(["coder", "triage", "math"], (call, earlier) => {
  const last = call.messages.at(-1)!;
  const names = (call.tools ?? []).map((t) => t.function.name);
  if (call.role === "triage") return toolCallText(names.find((n) => n.startsWith("transfer_to"))!, {});
  // a handoff's output is a tool message too ({"assistant":"math"}); a sum is a number
  if (last.role === "tool" && /^\d+$/.test(last.content))
    return call.role === "math" ? `2 + 3 = ${last.content}` : `The sum is ${last.content}.`;
  if (names.includes("add")) return `Let me add.\n${toolCallText("add", { a: 2, b: 3 })}`;
  return `echo ${earlier.length}: ${last.content}`;
});

/** The scripted backend, keeping each response's conversation as the run's backend does (for previous_response_id). */
const backend = Object.assign(scripted, {
  conversation(episodeId: string, responseId: string): GatewayMessage[] | undefined {
    const rec = scripted.episodes.get(episodeId)?.find((r) => responseIdOf(r.call.api, r.completion.callId) === responseId);
    if (!rec) return undefined;
    const { content, toolCalls } = rec.reply;
    return [...rec.call.messages, { role: "assistant", content: content ?? "", ...(toolCalls.length > 0 && { toolCalls }) }];
  },
});

let g: GatewayServer;
const client = (episode: string) => new OpenAI({ baseURL: g.baseUrlOf(episode), apiKey: `sk-${episode}`, maxRetries: 0 });
const addTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "add",
  description: "adds two numbers",
  parameters: { type: "object", properties: { a: { type: "number" } } },
  strict: false,
};

beforeAll(async () => {
  for (const e of ["plain", "stream", "tools", "previous", "agents", "ai-text", "ai-tools", "ai-stream", "langchain"]) backend.open(e);
  g = await serveGateway(backend);
  setTracingDisabled(true);
});
afterAll(() => g.close());

describe("Responses API with the openai SDK", () => {
  it("answers a plain request with a response object", async () => {
    const r = await client("plain").responses.create({ model: "coder", instructions: "be brief", input: "hello", max_output_tokens: 32 });
    expect(r).toMatchObject({ object: "response", status: "completed", model: "coder" });
    expect(r.id).toMatch(/^resp_/);
    expect(r.output_text).toBe("echo 0: hello");
    expect(r.usage?.output_tokens).toBe("echo 0: hello".length);
    const [rec] = backend.episodes.get("plain")!;
    expect(rec.call).toMatchObject({ api: "responses", role: "coder", maxTokens: 32 });
    expect(rec.call.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hello" },
    ]);
  });

  it("streams typed events, and the SDK's stream helper accumulates them", async () => {
    const stream = await client("stream").responses.create({ model: "coder", input: "streams", stream: true });
    let text = "";
    const types: string[] = [];
    let final: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
      if (e.type === "response.completed") final = e.response;
    }
    expect(text).toBe("echo 0: streams");
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(final?.output[0]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "echo 0: streams" }] });
    // responses.stream() validates every event against the snapshot it builds
    const helper = client("stream").responses.stream({ model: "coder", input: "again" });
    const done = await helper.finalResponse();
    expect(done.output_text).toBe("echo 1: again");
  });

  it("round-trips a function call: output items replayed with a function_call_output", async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "2 + 3?" }];
    const first = await client("tools").responses.create({ model: "coder", input, tools: [addTool], tool_choice: "auto" });
    const call = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(first.output.map((o) => o.type)).toEqual(["message", "function_call"]);
    expect(call).toMatchObject({ name: "add", arguments: '{"a":2,"b":3}', status: "completed" });
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), {
      type: "function_call_output",
      call_id: call.call_id,
      output: "5",
    });
    const second = await client("tools").responses.create({ model: "coder", input, tools: [addTool] });
    expect(second.output_text).toBe("The sum is 5.");
    const recs = backend.episodes.get("tools")!;
    // the message and its call came back as ONE assistant turn, as the reply was produced
    expect(recs[1].call.messages).toEqual([
      { role: "user", content: "2 + 3?" },
      { role: "assistant", content: "Let me add.", toolCalls: [{ id: call.call_id, name: "add", arguments: '{"a":2,"b":3}' }] },
      { role: "tool", content: "5", toolCallId: call.call_id },
    ]);
  });

  it("continues from previous_response_id", async () => {
    const c = client("previous");
    const first = await c.responses.create({ model: "coder", instructions: "sys", input: "2 + 3?", tools: [addTool] });
    const call = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await c.responses.create({
      model: "coder",
      instructions: "sys",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "5" }],
      tools: [addTool],
    });
    expect(second.output_text).toBe("The sum is 5.");
    expect(backend.episodes.get("previous")![1].call.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    await expect(c.responses.create({ model: "coder", previous_response_id: "resp_nope", input: "x" })).rejects.toMatchObject({
      status: 404,
      param: "previous_response_id",
    });
  });

  it("answers bad requests in OpenAI's error shape", async () => {
    const c = client("plain");
    await expect(
      c.responses.create({
        model: "coder",
        input: "x",
        tools: [{ type: "computer_2099" }],
      } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming),
    ).rejects.toMatchObject({ status: 400, param: "tools.0.type" });
    await expect(
      c.responses.create({ model: "coder", input: "x", frobnicate: true } as OpenAI.Responses.ResponseCreateParamsNonStreaming),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("frobnicate") });
  });
});

describe("Responses API with @openai/agents run()", () => {
  const agents = () => {
    const add = tool({
      name: "add",
      description: "adds two numbers",
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => String(a + b),
    });
    const math = new Agent({ name: "math", instructions: "do arithmetic", model: "math", tools: [add] });
    return new Agent({ name: "triage", instructions: "route", model: "triage", handoffs: [math] });
  };

  it("runs a handoff and a function tool, then the same streamed", async () => {
    // the SDK's default model provider: OpenAI Responses over HTTP, with this client
    setDefaultOpenAIClient(client("agents"));
    const result = await run(agents(), "what is 2 + 3?");
    expect(result.finalOutput).toBe("2 + 3 = 5");
    expect(result.lastAgent?.name).toBe("math");
    const recs = backend.episodes.get("agents")!;
    expect(recs.map((r) => r.call.role)).toEqual(["triage", "math", "math"]);
    expect(recs[0].reply.toolCalls[0].name).toBe("transfer_to_math");
    // the replayed turn "Let me add." + add(...) is one assistant message, answered by the tool's output
    const toolId = recs[1].reply.toolCalls[0].id;
    expect(recs[2].call.messages.slice(-2)).toEqual([
      { role: "assistant", content: "Let me add.", toolCalls: [{ id: toolId, name: "add", arguments: '{"a":2,"b":3}' }] },
      { role: "tool", content: "5", toolCallId: toolId },
    ]);

    const streamed = await run(agents(), "what is 2 + 3?", { stream: true });
    let text = "";
    for await (const piece of streamed.toTextStream()) text += piece;
    await streamed.completed;
    expect(streamed.finalOutput).toBe("2 + 3 = 5");
    expect(text).toContain("2 + 3 = 5");
    expect(backend.episodes.get("agents")!.map((r) => r.call.role)).toEqual(["triage", "math", "math", "triage", "math", "math"]);
  });
});

describe("Responses API with the AI SDK's default OpenAI model", () => {
  const model = (episode: string) => createOpenAI({ baseURL: g.baseUrlOf(episode), apiKey: `sk-${episode}` })("coder");
  const add = aiTool({
    description: "adds two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => String(a + b),
  });

  it("generates text", async () => {
    const r = await generateText({ model: model("ai-text"), system: "be brief", prompt: "a haiku", maxRetries: 0 });
    expect(r.text).toBe("echo 0: a haiku");
    expect(r.usage.outputTokens).toBe("echo 0: a haiku".length);
    expect(r.response.id).toMatch(/^resp_/);
  });

  it("runs a tool call to a final answer (earlier text replayed as an item reference)", async () => {
    const r = await generateText({ model: model("ai-tools"), prompt: "2 + 3?", tools: { add }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe("The sum is 5.");
    expect(r.steps[0].toolCalls[0]).toMatchObject({ toolName: "add", input: { a: 2, b: 3 } });
    const recs = backend.episodes.get("ai-tools")!;
    const id = recs[0].reply.toolCalls[0].id;
    expect(recs[1].call.messages.slice(-2)).toEqual([
      { role: "assistant", content: "Let me add.", toolCalls: [{ id, name: "add", arguments: '{"a":2,"b":3}' }] },
      { role: "tool", content: "5", toolCallId: id },
    ]);
  });

  it("streams text and a tool call", async () => {
    const s = streamText({ model: model("ai-stream"), prompt: "a poem", maxRetries: 0 });
    let text = "";
    for await (const part of s.textStream) text += part;
    expect(text).toBe("echo 0: a poem");
    const t = streamText({ model: model("ai-stream"), prompt: "2 + 3?", tools: { add }, stopWhen: stepCountIs(3), maxRetries: 0 });
    let all = "";
    for await (const part of t.textStream) all += part;
    expect(await t.text).toBe("The sum is 5.");
    expect(all).toBe("Let me add.The sum is 5.");
    expect((await t.steps)[0].toolCalls[0]).toMatchObject({ toolName: "add", input: { a: 2, b: 3 } });
  });
});

describe("Responses API with LangChain (useResponsesApi)", () => {
  it("invokes, round-trips a tool call and streams", async () => {
    const llm = new ChatOpenAI({
      model: "coder",
      useResponsesApi: true,
      apiKey: "sk-langchain",
      maxRetries: 0,
      configuration: { baseURL: g.baseUrlOf("langchain") },
    });
    expect((await llm.invoke("hi")).text).toBe("echo 0: hi");
    const withTools = llm.bindTools([
      { type: "function", function: { name: "add", description: "adds", parameters: addTool.parameters! } },
    ]);
    const asked = await withTools.invoke("2 + 3?");
    expect(asked.tool_calls?.[0]).toMatchObject({ name: "add", args: { a: 2, b: 3 } });
    const answered = await withTools.invoke([
      { role: "user", content: "2 + 3?" },
      asked,
      { role: "tool", content: "5", tool_call_id: asked.tool_calls![0].id! },
    ]);
    expect(answered.text).toBe("The sum is 5.");
    let streamed = "";
    for await (const chunk of await llm.stream("streams")) streamed += chunk.text;
    expect(streamed).toBe("echo 3: streams");
  });
});
