// The gateway with the OpenAI Agents SDK (chat-completions model, a handoff between two agents and a
// function tool) and the Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`: text, stream, tool call),
// both unmodified. Handoffs are tool calls, so the scripted model triggers one deterministically.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import { generateText, jsonSchema, stepCountIs, streamText, tool as aiTool } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type GatewayServer, serveGateway } from "../../src/gateway/serve.js";
import { scriptedBackend, toolCallText } from "./scripted-backend.js";

const backend = scriptedBackend(["triage", "math", "writer"], (call) => {
  const last = call.messages.at(-1)!;
  const names = (call.tools ?? []).map((t) => t.function.name);
  if (call.role === "triage") return toolCallText(names.find((n) => n.startsWith("transfer_to"))!, {});
  if (call.role === "math") {
    if (last.role === "tool" && last.content.includes("5")) return "2 + 3 = 5";
    if (names.includes("add")) return toolCallText("add", { a: 2, b: 3 });
    return "no tools";
  }
  return `wrote: ${last.content}`;
});

let g: GatewayServer;
beforeAll(async () => {
  for (const e of ["agents", "ai-text", "ai-stream", "ai-tools"]) backend.open(e);
  g = await serveGateway(backend);
  setTracingDisabled(true);
});
afterAll(() => g.close());

describe("gateway with @openai/agents", () => {
  it("runs a handoff (triage → math) and a function tool to a final answer", async () => {
    const client = new OpenAI({ baseURL: g.baseUrlOf("agents"), apiKey: "sk-agents", maxRetries: 0 });
    const add = tool({
      name: "add",
      description: "adds two numbers",
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => String(a + b),
    });
    const math = new Agent({
      name: "math",
      instructions: "do arithmetic",
      model: new OpenAIChatCompletionsModel(client, "math"),
      tools: [add],
    });
    const triage = new Agent({
      name: "triage",
      instructions: "route",
      model: new OpenAIChatCompletionsModel(client, "triage"),
      handoffs: [math],
    });
    const result = await run(triage, "what is 2 + 3?");
    expect(result.finalOutput).toBe("2 + 3 = 5");
    expect(result.lastAgent?.name).toBe("math");
    const recs = backend.episodes.get("agents")!;
    expect(recs.map((r) => r.call.role)).toEqual(["triage", "math", "math"]);
    expect(recs[0].reply.toolCalls[0].name).toBe("transfer_to_math");
    expect(recs[1].reply.toolCalls[0]).toMatchObject({ name: "add", arguments: '{"a":2,"b":3}' });
    // the tool's result came back as a tool message answering the recorded call id
    expect(recs[2].call.messages.at(-1)).toMatchObject({ role: "tool", content: "5", toolCallId: recs[1].reply.toolCalls[0].id });
  });
});

describe("gateway with the Vercel AI SDK", () => {
  const provider = (episode: string) =>
    createOpenAICompatible({ name: "maso", baseURL: g.baseUrlOf(episode), apiKey: `sk-${episode}`, includeUsage: true });

  it("generates and streams text", async () => {
    const r = await generateText({ model: provider("ai-text")("writer"), prompt: "a haiku", maxRetries: 0 });
    expect(r.text).toBe("wrote: a haiku");
    expect(r.usage.outputTokens).toBe("wrote: a haiku".length);
    const s = streamText({ model: provider("ai-stream")("writer"), messages: [{ role: "user", content: "a poem" }], maxRetries: 0 });
    let text = "";
    for await (const part of s.textStream) text += part;
    expect(text).toBe("wrote: a poem");
  });

  it("runs a tool call to a final answer", async () => {
    const r = await generateText({
      model: provider("ai-tools")("math"),
      prompt: "2 + 3?",
      tools: {
        add: aiTool({
          description: "adds two numbers",
          inputSchema: jsonSchema<{ a: number; b: number }>({
            type: "object",
            properties: { a: { type: "number" }, b: { type: "number" } },
            required: ["a", "b"],
          }),
          execute: async ({ a, b }) => String(a + b),
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(r.text).toBe("2 + 3 = 5");
    expect(r.steps[0].toolCalls[0]).toMatchObject({ toolName: "add", input: { a: 2, b: 3 } });
  });
});
