// The gateway with the real `openai` SDK, unmodified: plain chat, streaming with usage, a tool-calling
// round trip, JSON-schema output, per-episode API keys, 429 retries without duplicate samples, and
// OpenAI-shaped errors. The model is scripted (scripted-backend.ts) so tool calls are deterministic.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayServer, serveGateway } from "../../src/gateway/serve.js";
import { scriptedBackend, toolCallText } from "./scripted-backend.js";

const backend = scriptedBackend(
  ["coder", "planner"],
  (call, earlier) => {
    const last = call.messages.at(-1)!;
    if (call.responseFormat) return last.content.includes("bad") ? '{"answer": 3' : '{"answer": 42}';
    if (call.tools && last.role !== "tool") return `Let me add.\n${toolCallText("add", { a: 2, b: 3 })}`;
    if (last.role === "tool") return `The sum is ${last.content}.`;
    return `echo ${earlier.length}: ${last.content}`;
  },
  { "sk-episode-k": "k" },
);

let g: GatewayServer;
const client = (episode: string, maxRetries = 0) => new OpenAI({ baseURL: g.baseUrlOf(episode), apiKey: `sk-${episode}`, maxRetries });

beforeAll(async () => {
  for (const e of ["plain", "stream", "tools", "json", "k", "retry", "errors"]) backend.open(e);
  g = await serveGateway(backend);
});
afterAll(() => g.close());

describe("gateway with the openai SDK", () => {
  it("answers a plain chat with an OpenAI-shaped completion", async () => {
    const r = await client("plain").chat.completions.create({
      model: "coder",
      messages: [
        { role: "developer", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "hello" }] },
      ],
      temperature: 0.3,
      max_completion_tokens: 32,
      store: false,
      metadata: { run: "x" },
    });
    expect(r.object).toBe("chat.completion");
    expect(r.model).toBe("coder");
    expect(r.choices[0].message).toMatchObject({ role: "assistant", content: "echo 0: hello" });
    expect(r.choices[0].finish_reason).toBe("stop");
    expect(r.usage?.completion_tokens).toBe("echo 0: hello".length);
    const [rec] = backend.episodes.get("plain")!;
    expect(rec.call).toMatchObject({ role: "coder", temperature: 0.3, maxTokens: 32 });
    expect(rec.call.messages[0]).toEqual({ role: "system", content: "be brief" });
  });

  it("streams chunks, a usage chunk and [DONE]", async () => {
    const stream = await client("stream").chat.completions.create({
      model: "planner",
      messages: [{ role: "user", content: "plan" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe("echo 0: plan");
    expect(finish).toBe("stop");
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it("round-trips a tool call: tool_calls → tool result → final answer", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "add",
          description: "adds",
          parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
        },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "2 + 3?" }];
    const first = await client("tools").chat.completions.create({
      model: "coder",
      messages,
      tools,
      tool_choice: "auto",
      parallel_tool_calls: false,
    });
    const msg = first.choices[0].message;
    expect(first.choices[0].finish_reason).toBe("tool_calls");
    expect(msg.content).toBe("Let me add.");
    expect(msg.tool_calls).toHaveLength(1);
    const tc = msg.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(tc).toMatchObject({ type: "function", function: { name: "add" } });
    expect(JSON.parse(tc.function.arguments)).toEqual({ a: 2, b: 3 });
    messages.push(msg, { role: "tool", tool_call_id: tc.id, content: "5" });
    const second = await client("tools").chat.completions.create({ model: "coder", messages, tools });
    expect(second.choices[0].message.content).toBe("The sum is 5.");
    const recs = backend.episodes.get("tools")!;
    expect(recs[1].call.messages[1]).toMatchObject({ role: "assistant", toolCalls: [{ id: tc.id, name: "add" }] });
    expect(recs[1].call.messages[2]).toEqual({ role: "tool", content: "5", toolCallId: tc.id });
  });

  it("streams a tool call with index, id and name on its first delta", async () => {
    const stream = await client("tools").chat.completions.create({
      model: "coder",
      messages: [{ role: "user", content: "again" }],
      tools: [{ type: "function", function: { name: "add", parameters: { type: "object" } } }],
      stream: true,
    });
    const deltas: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    for await (const chunk of stream) deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
    expect(deltas[0]).toMatchObject({ index: 0, type: "function", function: { name: "add" } });
    expect(deltas[0].id).toMatch(/^call_/);
    expect(JSON.parse(deltas.map((d) => d.function?.arguments ?? "").join(""))).toEqual({ a: 2, b: 3 });
  });

  it("checks JSON-schema output; a mismatch is a recorded format failure, not an error", async () => {
    const response_format: OpenAI.ResponseFormatJSONSchema = {
      type: "json_schema",
      json_schema: { name: "answer", schema: { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] } },
    };
    const ok = await client("json").chat.completions.create({
      model: "coder",
      messages: [{ role: "user", content: "q" }],
      response_format,
    });
    expect(JSON.parse(ok.choices[0].message.content!)).toEqual({ answer: 42 });
    const bad = await client("json").chat.completions.create({
      model: "coder",
      messages: [{ role: "user", content: "bad" }],
      response_format,
    });
    expect(bad.choices[0].message.content).toBe('{"answer": 3');
    const recs = backend.episodes.get("json")!;
    expect(recs[0].reply.formatFailure).toBeUndefined();
    expect(recs[1].reply.formatFailure).toMatch(/not JSON/);
  });

  it("names the episode by API key on the plain /v1 base URL", async () => {
    const c = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: "sk-episode-k", maxRetries: 0 });
    const r = await c.chat.completions.create({ model: "planner", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0].message.content).toBe("echo 0: hi");
    expect(backend.episodes.get("k")).toHaveLength(1);
    await expect(new OpenAI({ baseURL: `${g.url}/v1`, apiKey: "sk-nobody", maxRetries: 0 }).models.list()).rejects.toMatchObject({
      status: 401,
    });
    const models = await c.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["coder", "planner"]);
  });

  it("retries a 429 by itself, and the retry makes exactly one sample", async () => {
    const before = backend.generated();
    backend.refuse(2);
    const r = await client("retry", 3).chat.completions.create({ model: "coder", messages: [{ role: "user", content: "x" }] });
    expect(r.choices[0].message.content).toBe("echo 0: x");
    expect(backend.generated() - before).toBe(1);
    expect(backend.episodes.get("retry")).toHaveLength(1);
  });

  it("answers a repeated Idempotency-Key with the first answer, not a second sample", async () => {
    backend.open("idem");
    const post = () =>
      fetch(`${g.baseUrlOf("idem")}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "k-1", authorization: "Bearer sk-idem" },
        body: JSON.stringify({ model: "coder", messages: [{ role: "user", content: "once" }] }),
      }).then((r) => r.json() as Promise<{ id: string }>);
    const [a, b] = await Promise.all([post(), post()]);
    const c = await post();
    expect(new Set([a.id, b.id, c.id]).size).toBe(1);
    expect(backend.episodes.get("idem")).toHaveLength(1);
  });

  it("reads workflow labels from metadata and refuses malformed ones", async () => {
    backend.open("labels");
    await client("labels").chat.completions.create({
      model: "coder",
      messages: [{ role: "user", content: "x" }],
      metadata: { maso_node: "plan", maso_turn: "2" },
    });
    expect(backend.episodes.get("labels")![0].call).toMatchObject({ node: "plan", turn: 2 });
    await expect(
      client("labels").chat.completions.create({
        model: "coder",
        messages: [{ role: "user", content: "x" }],
        metadata: { maso_turn: "two" },
      }),
    ).rejects.toMatchObject({ status: 400, param: "metadata" });
  });

  it("serves 64 concurrent episodes, each its own history", async () => {
    const ids = Array.from({ length: 64 }, (_, i) => `many-${i}`);
    for (const id of ids) backend.open(id);
    await Promise.all(
      ids.map(async (id) => {
        const c = client(id);
        await c.chat.completions.create({ model: "planner", messages: [{ role: "user", content: id }] });
        await c.chat.completions.create({ model: "planner", messages: [{ role: "user", content: `${id}!` }] });
      }),
    );
    for (const id of ids) expect(backend.episodes.get(id)!.map((r) => r.completion.text)).toEqual([`echo 0: ${id}`, `echo 1: ${id}!`]);
  });

  it("keeps the call of a client that disconnects mid-stream, and goes on serving", async () => {
    backend.open("gone");
    const ac = new AbortController();
    const stream = await client("gone").chat.completions.create(
      { model: "planner", messages: [{ role: "user", content: "bye" }], stream: true },
      { signal: ac.signal },
    );
    let chunks = 0;
    for await (const _chunk of stream) {
      chunks++;
      ac.abort(); // the client goes away after the first event
    }
    expect(chunks).toBe(1);
    expect(backend.episodes.get("gone")).toHaveLength(1);
    const next = await client("gone").chat.completions.create({ model: "planner", messages: [{ role: "user", content: "back" }] });
    expect(next.choices[0].message.content).toBe("echo 1: back");
  });

  it("answers bad requests in OpenAI's error shape", async () => {
    const c = client("errors");
    await expect(c.chat.completions.create({ model: "nobody", messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({
      status: 404,
      code: "model_not_found",
      message: expect.stringContaining("known roles: coder, planner"),
    });
    await expect(c.chat.completions.create({ model: "coder", messages: [{ role: "user", content: "x" }], n: 2 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      c.chat.completions.create({
        model: "coder",
        messages: [{ role: "user", content: "x" }],
        logit_bias: { 1: 2 },
      } as OpenAI.ChatCompletionCreateParamsNonStreaming),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("logit_bias") });
    await expect(
      c.chat.completions.create({
        model: "coder",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }],
      }),
    ).rejects.toMatchObject({ status: 400, param: "messages.0.content" });
    const raw = await fetch(`${g.baseUrlOf("errors")}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-errors" },
      body: "{not json",
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    const none = await fetch(`${g.baseUrlOf("closed")}/chat/completions`, { method: "POST", body: "{}" });
    expect(none.status).toBe(401);
    expect(backend.episodes.get("errors")).toHaveLength(0);
  });
});
