// The benchmark workload as an SDK agent: the same three calls as workload.ts, through the wire API
// and streaming mode its task names (default: Chat Completions, not streamed), each call timed
// (sdk-calls.ts) and its times kept in `timings` for the benchmark to read.
import type { AgentContext, AgentResult } from "../../src/gateway/agent-module.js";
import { type Api, asker, bareRoundTrip, type Timed } from "./sdk-calls.js";
import { againPrompt, firstPrompt, judgePrompt, type Task as Topic, tasks, configs as workloadConfigs } from "./workload.js";

/** A workload task, and how the agent makes its calls. */
export interface Task extends Topic {
  api?: Api;
  stream?: boolean;
  /** time bare round trips (bareRoundTrip) instead of the workload's calls */
  bare?: boolean;
}

export { tasks };
export const roles = ["writer", "judge"];
export const config = workloadConfigs.c32;
export const configs = workloadConfigs;

/** Every call's times, in the order the calls ended; the benchmark empties it after each run. */
export const timings: Timed[] = [];

export async function agent(task: Task, { baseURL, apiKey }: AgentContext): Promise<AgentResult> {
  const ask = asker(task.api ?? "chat", task.stream === true, baseURL, apiKey);
  if (task.bare) {
    for (let i = 0; i < 3; i++) timings.push(await bareRoundTrip(task.api ?? "chat", baseURL, apiKey));
    await ask("writer", firstPrompt(task.topic), "draft"); // an episode without a model call is a failure
    return { reward: 0 };
  }
  const timed = async (...args: Parameters<typeof ask>) => {
    const t = await ask(...args);
    timings.push(t);
    return t.text;
  };
  const draft = await timed("writer", firstPrompt(task.topic), "draft");
  const verdict = await timed("judge", judgePrompt(draft), "judge");
  await timed("writer", againPrompt(task.topic, draft, verdict), "again");
  return { reward: 0 };
}
