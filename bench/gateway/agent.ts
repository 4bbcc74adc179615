// The benchmark workload as an `openai` SDK agent: the same three calls as workload.ts, each timed
// around the SDK call and split, by the gateway's Server-Timing header, into generation and the rest.
import OpenAI from "openai";
import type { AgentContext, AgentResult } from "../../src/gateway/agent-module.js";
import { againPrompt, configs as workloadConfigs, firstPrompt, judgePrompt, MAX_TOKENS, type Task, tasks } from "./workload.js";

export { tasks };
export const roles = ["writer", "judge"];
export const config = workloadConfigs.c32;
export const configs = workloadConfigs;

/** Per call: wall time around the SDK call and the gateway's generation time (ms). */
export const timings: { wallMs: number; generationMs: number; handlerMs: number }[] = [];

async function ask(
  client: OpenAI,
  model: string,
  prompt: readonly { role: string; content: string }[],
  node: string,
): Promise<OpenAI.ChatCompletionMessage> {
  const messages = prompt as OpenAI.ChatCompletionMessageParam[];
  const t0 = performance.now();
  const { data, response } = await client.chat.completions
    .create({ model, messages, max_tokens: MAX_TOKENS, metadata: { maso_node: node } })
    .withResponse();
  const wallMs = performance.now() - t0;
  const timing = response.headers.get("server-timing") ?? "";
  const dur = (name: string) => Number(new RegExp(`${name};dur=([\\d.]+)`).exec(timing)?.[1] ?? Number.NaN);
  timings.push({ wallMs, generationMs: dur("generate"), handlerMs: dur("handler") });
  return data.choices[0].message;
}

export async function agent(task: Task, { baseURL, apiKey }: AgentContext): Promise<AgentResult> {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const draft = await ask(client, "writer", firstPrompt(task.topic), "draft");
  const verdict = await ask(client, "judge", judgePrompt(draft.content ?? ""), "judge");
  await ask(client, "writer", againPrompt(task.topic, draft.content ?? "", verdict.content ?? ""), "again");
  return { reward: 0 };
}
