// Retrieve-Extract-Answer (one of the five reference workflows) on the synthetic world, for `maso train` / `maso eval`.
//
//   decompose ──fan-out: one branch per sub-query──▶ [retrieve (top-4) → extract] ──▶ join ──▶ answer ──▶ END
//
// Roles: `decompose` writes 1–3 search queries as a JSON list; `extract` (one call per sub-query, in
// parallel, after that query's retrieval) condenses its passages into short evidence or "no useful
// information"; `answer` reads the joined evidence and writes <final_answer>…</final_answer>.
// Reward, as QD-Retrieve-Answer: the final answer's F1 goes in full to every role (`answer-f1`), plus
// each role's own format term (`format`: 0 well-formed, −1 × rewardWeights.format).
// Cast (default `config`): the committed base checkpoint with one rank-8 LoRA adapter per role;
// `configs.shared` / `configs.perRole` are the alternatives (see ../iterative-search/*.config.ts for
// how to pass one with --config).
import { formatReward, sharedOutcome, END, START, defineRole, jsonStringListParser, tagParser, textParser, workflow as build } from "maso";
import type { QaTask } from "maso/envs";
import { answerPrompt, decomposePrompt, extractPrompt, NO_USEFUL_INFORMATION } from "../common/prompts.js";
import {
  type QaState,
  answerF1,
  bigBatchConfig,
  metric,
  QA_MODEL_DIR,
  qaConfig,
  qaMetrics,
  retrieveTool,
  taskId,
  tasks,
} from "../common/world-qa.js";

export interface State extends QaState {
  subQueries: string[];
  /** What the answer role reads: the useful evidence of every branch, in sub-query order. */
  evidence: string[];
}

export const decompose = defineRole<State, string[]>({
  name: "decompose",
  prompt: (s) => decomposePrompt(s.question),
  parse: jsonStringListParser({ minItems: 1, maxItems: 3, maxItemLength: 200 }),
  fallback: () => [],
  maxNewTokens: 64,
  cutOff: "format-failure",
});

export const extract = defineRole<State, string>({
  name: "extract",
  // inside a branch: ctx.item is the sub-query, ctx.prev the retrieve node's passages (or `{ error }`)
  prompt: (_s, ctx) => extractPrompt(String(ctx.item), Array.isArray(ctx.prev) ? (ctx.prev as string[]) : []),
  parse: textParser({ maxLength: 400 }),
  fallback: () => NO_USEFUL_INFORMATION,
  maxNewTokens: 64,
  cutOff: "format-failure",
});

export const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => answerPrompt(s.evidence, s.question),
  parse: tagParser("final_answer"),
  fallback: () => "",
  maxNewTokens: 32,
  cutOff: "format-failure",
});

/** Evidence worth showing the answer role; when no branch found any, the answer role is told so. */
export function composeEvidence(extracts: readonly unknown[] | undefined): string[] {
  const useful = (extracts ?? []).filter((e): e is string => typeof e === "string" && e.toLowerCase() !== NO_USEFUL_INFORMATION);
  return useful.length > 0 ? [...new Set(useful)] : [NO_USEFUL_INFORMATION];
}

export const workflow = build<State>({ name: "retrieve-extract-answer", metrics: qaMetrics })
  // a malformed list (fallback []) still retrieves, with the question as the one query: only the format term punishes it
  .role("decompose", decompose, { update: (qs, s) => ({ subQueries: qs.length > 0 ? qs : [s.question] }) })
  .tool("retrieve", retrieveTool, { input: (_s, ctx) => String(ctx.item) })
  .role("extract", extract)
  .fn("join", (_s, ctx) => ({ evidence: composeEvidence(ctx.branchOutputs) }))
  .role("answer", answer, { update: (a) => ({ answer: a }) })
  .edge(START, "decompose")
  .fanOut("decompose", { over: (s) => s.subQueries, branch: ["retrieve", "extract"], join: "join" })
  .edge("join", "answer")
  .edge("answer", END)
  .compile();

export const rewards = [
  formatReward({ weight: 1 }),
  sharedOutcome<QaTask, State>((t, task) => answerF1(t.finalState.answer, task), { name: "answer-f1" }),
];

export { metric, taskId, tasks };

export const initialState = (task: QaTask): State => ({
  question: task.question,
  gold: task.answers,
  subQueries: [],
  evidence: [],
  answer: "",
});

const ROLES = ["decompose", "extract", "answer"];

const lora = qaConfig("retrieve-extract-answer", ROLES, "lora");

/**
 * The steadiest setting of the sweep in docs/notes/qa-workflows.md: 16 tasks × 8 episodes per step, LoRA lr 3e-4,
 * and per-role rollout temperatures — queries at 0.5, evidence explored at 0.7, answers exploiting at
 * 0.3 (a T = 1 answer role stopped copying names under big batches).
 */
const explore = {
  ...lora,
  name: "retrieve-extract-answer-explore",
  models: { base: { ...lora.models.base, optimizer: { ...lora.models.base.optimizer, lr: 3e-4 } } },
  schedule: { ...lora.schedule, tasksPerStep: 16, concurrency: 64 },
  sampling: { roles: { decompose: { temperature: 0.5 }, extract: { temperature: 0.7 }, answer: { temperature: 0.3 } } },
};

/**
 * The three cast shapes (see ../cast-shapes.ts; `config` is the LoRA one), the `explore` sweep setting,
 * and `baseQa`: the LoRA cast on models/base-qa, whose extract copies the retrieved document.
 */
export const configs = {
  lora,
  shared: qaConfig("retrieve-extract-answer", ROLES, "shared"),
  perRole: qaConfig("retrieve-extract-answer", ROLES, "perRole"),
  explore,
  baseQa: qaConfig("retrieve-extract-answer", ROLES, "lora", QA_MODEL_DIR),
  /** baseQa with 8 tasks × 8 episodes per step (same lr): baseQa gained in every seed, with a noisy dev curve */
  baseQaBig: bigBatchConfig(qaConfig("retrieve-extract-answer", ROLES, "lora", QA_MODEL_DIR), 1e-3),
};

export const config = lora;
