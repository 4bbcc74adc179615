// QD-Retrieve-Answer (one of the five reference workflows) on the synthetic world, for `maso train` / `maso eval`.
//
//   decompose ──fan-out: one branch per sub-query──▶ retrieve (top-4) ──▶ join ──▶ answer ──▶ END
//
// Roles: `decompose` writes 1–3 search queries as a JSON list; `answer` reads the retrieved passages
// and writes <final_answer>…</final_answer>.
// Reward ("local format, global correctness"): the final answer's F1 goes in full to both roles
// (`answer-f1`), plus each role's own format term (`format`: 0 well-formed, −1 × rewardWeights.format).
// Cast (default `config`): the committed base checkpoint with one rank-8 LoRA adapter per role;
// `configs.shared` (one model for both roles) and `configs.perRole` (one model per role) are the
// alternatives: `maso train … --config` a file that re-exports one of them.
import { formatReward, sharedOutcome, END, START, defineRole, jsonStringListParser, tagParser, workflow as build } from "maso";
import type { QaTask } from "maso/envs";
import { answerPrompt, decomposePrompt } from "../common/prompts.js";
import {
  type QaState,
  answerF1,
  mergePassages,
  metric,
  QA_MODEL_DIR,
  qaConfig,
  qaMetrics,
  retrieveTool,
  rolloutTemperature,
  taskId,
  tasks,
} from "../common/world-qa.js";

export interface State extends QaState {
  subQueries: string[];
  passages: string[];
}

export const decompose = defineRole<State, string[]>({
  name: "decompose",
  prompt: (s) => decomposePrompt(s.question),
  parse: jsonStringListParser({ minItems: 1, maxItems: 3, maxItemLength: 200 }),
  fallback: () => [],
  maxNewTokens: 64,
  cutOff: "format-failure",
});

export const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => answerPrompt(s.passages, s.question),
  parse: tagParser("final_answer"),
  fallback: () => "",
  maxNewTokens: 32,
  cutOff: "format-failure",
});

export const workflow = build<State>({ name: "qd-retrieve-answer", metrics: qaMetrics })
  // a malformed list (fallback []) still retrieves, with the question as the one query: only the format term punishes it
  .role("decompose", decompose, { update: (qs, s) => ({ subQueries: qs.length > 0 ? qs : [s.question] }) })
  .tool("retrieve", retrieveTool, { input: (_s, ctx) => String(ctx.item) })
  .fn("join", (_s, ctx) => ({ passages: mergePassages(ctx.branchOutputs) }))
  .role("answer", answer, { update: (a) => ({ answer: a }) })
  .edge(START, "decompose")
  .fanOut("decompose", { over: (s) => s.subQueries, branch: "retrieve", join: "join" })
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
  passages: [],
  answer: "",
});

const ROLES = ["decompose", "answer"];

/** The LoRA cast on models/base-qa (trained further on retrieved documents in the roles' prompt shapes). */
const baseQa = qaConfig("qd-retrieve-answer", ROLES, "lora", QA_MODEL_DIR);

/** The three cast shapes (see ../cast-shapes.ts); `config` is the LoRA one. */
export const configs = {
  lora: qaConfig("qd-retrieve-answer", ROLES, "lora"),
  shared: qaConfig("qd-retrieve-answer", ROLES, "shared"),
  perRole: qaConfig("qd-retrieve-answer", ROLES, "perRole"),
  baseQa,
  /** baseQa with rollouts at T = 0.6 (as iterative search's baseQaPerRoleBigT06) */
  baseQaT06: rolloutTemperature(baseQa, 0.6),
};

export const config = configs.lora;
