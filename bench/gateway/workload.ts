// The benchmark workload as a DSL workflow: writer → judge → writer (the second writer call sees its
// first draft and the verdict), on the committed base model with one LoRA adapter per role.
import { fileURLToPath } from "node:url";
import { sharedOutcome } from "../../src/rewards/index.js";
import { defineRole, END, START, textParser, workflow as build } from "../../src/workflow/index.js";
import type { ChatMessage } from "../../src/engine/tokenizer/types.js";

export interface Task {
  topic: string;
}

interface S {
  topic: string;
  draft: string;
  verdict: string;
  final: string;
}

/** New tokens per call; the model does not stop early often, so calls cost about this much. */
export const MAX_TOKENS = 32;

export const firstPrompt = (topic: string): ChatMessage[] => [{ role: "user", content: `Write about the ${topic}.` }];
export const judgePrompt = (draft: string): ChatMessage[] => [{ role: "user", content: `Judge: ${draft}` }];
export const againPrompt = (topic: string, draft: string, verdict: string): ChatMessage[] => [
  ...firstPrompt(topic),
  { role: "assistant", content: draft },
  { role: "user", content: `The judge said: ${verdict}. Again.` },
];

const role = (name: string, prompt: (s: S) => ChatMessage[]) =>
  defineRole<S, string>({ name, prompt, parse: textParser(), fallback: (t) => t, maxNewTokens: MAX_TOKENS });

export const workflow = build<S>({ name: "write-judge" })
  .role(
    "draft",
    role("writer", (s) => firstPrompt(s.topic)),
    { update: (draft) => ({ draft }) },
  )
  .role(
    "judge",
    role("judge", (s) => judgePrompt(s.draft)),
    { update: (verdict) => ({ verdict }) },
  )
  .role(
    "again",
    role("writer", (s) => againPrompt(s.topic, s.draft, s.verdict)),
    { update: (final) => ({ final }) },
  )
  .edge(START, "draft")
  .edge("draft", "judge")
  .edge("judge", "again")
  .edge("again", END)
  .compile();

export const roles = ["writer", "judge"];
export const rewards = [sharedOutcome<Task, S>(() => 0)];
const topics = ["sea", "sky", "tree", "stone", "river", "cloud", "rain", "snow"];
export const tasks = { train: topics.map((topic) => ({ topic })), test: topics.map((topic) => ({ topic })) };
export const initialState = (t: Task): S => ({ topic: t.topic, draft: "", verdict: "", final: "" });
export const metric = () => 0;

const BASE = fileURLToPath(new URL("../../models/base", import.meta.url));
const configFor = (concurrency: number) => ({
  name: "gateway-bench",
  models: { base: { weights: BASE, lora: { rank: 8, adapters: roles } } },
  cast: { writer: "base/writer", judge: "base/judge" },
  schedule: { concurrency },
  // evaluate() (the benchmark's rollouts) keeps eval.concurrency episodes in flight, not schedule's
  eval: { concurrency },
  sampling: { temperature: 1 },
});
export const config = configFor(32);
export const configs = { c1: configFor(1), c16: configFor(16), c32: configFor(32) };
