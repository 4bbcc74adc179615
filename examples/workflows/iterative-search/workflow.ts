// Iterative search, M-ASK (one of the five reference workflows) on the synthetic world, for `maso train` / `maso eval`.
//
//   plan ──▶ ┌ search ──<end>──────────────────────────────────────────────▶ END
//            │   └─<search>q</search>─▶ retrieve (top-4) ─▶ summarize ─▶ update ─▶ answer ─┐
//            └──────────────────────────── next turn, at most T = 3 ◀──────────────────────┘
//
// Roles: `plan` answers from memory (a_0, <final_answer>); the knowledge state starts empty. Each turn
// t = 1…3: `search` asks one query or stops (<end>); `summarize` turns the passages into short
// evidence or "no useful information"; `update` writes one knowledge item, added to the state;
// `answer` answers over the knowledge (a_t, <final_answer>). The final answer is the latest a_t.
// Rewards (the paper's rule, with src/rewards' perTurnScore and marginalGain):
//   plan gets F1(a_0); answer at turn t gets F1(a_t)                                   (`answer-f1`)
//   search, summarize and update at turn t share F1(a_t) − F1(a_{t−1}); <end> earns 0   (`marginal-gain`)
//   every role: 0 well-formed, −1 × rewardWeights.format malformed                    (`format`)
// Format failures never derail the walk: a malformed search searches the question itself, a malformed
// answer keeps a_{t−1} (so search/summarize/update are not blamed for it); the format term alone
// punishes them.
// Cast: `configs.lora` (default `config`: one rank-8 LoRA adapter per role on the frozen base),
// `configs.shared` (one fully fine-tuned model for all five roles) and `configs.perRole` (one model
// per role) for the parameter-sharing comparison; shared.config.ts and per-role.config.ts next to
// this file pass the other two to `maso train … --config`.
import {
  formatReward,
  marginalGain,
  perTurnScore,
  type TurnMetric,
  END,
  START,
  defineRole,
  searchOrEndParser,
  tagParser,
  textParser,
  workflow as build,
  type SearchAction,
  type StepRecord,
  type ToolResult,
  type WorkflowBuilder,
} from "maso";
import type { QaTask } from "maso/envs";
import {
  knowledgeAnswerPrompt,
  NO_USEFUL_INFORMATION,
  planPrompt,
  searchPrompt,
  summarizePrompt,
  updatePrompt,
} from "../common/prompts.js";
import {
  type QaState,
  answerF1,
  bigBatchConfig,
  metric,
  QA_MODEL_DIR,
  qaConfig,
  qaMetrics,
  retrieveTool,
  rolloutTemperature,
  taskId,
  tasks,
} from "../common/world-qa.js";

/** Most search turns per episode. */
export const MAX_TURNS = 3;

export interface State extends QaState {
  /** Knowledge items written by `update`, oldest first. */
  knowledge: string[];
  /** answers[t] = a_t: plan's answer at 0, the answer role's at turn t. `answer` is the latest. */
  answers: string[];
  /** This turn's query, passages and evidence. */
  query: string;
  passages: string[];
  evidence: string;
  /** The world whose documents `retrieve` searches in fresh-train.ts; absent (the reference world) here. */
  world?: number;
}

export const plan = defineRole<State, string>({
  name: "plan",
  prompt: (s) => planPrompt(s.question),
  parse: tagParser("final_answer"),
  fallback: () => "",
  maxNewTokens: 32,
  cutOff: "format-failure",
});

export const search = defineRole<State, SearchAction>({
  name: "search",
  prompt: (s) => searchPrompt(s.question, s.knowledge),
  parse: searchOrEndParser({ maxQueryLength: 200 }),
  // an empty query: the search node's update searches the question instead
  fallback: () => ({ action: "search", query: "" }),
  maxNewTokens: 48,
  cutOff: "format-failure",
});

export const summarize = defineRole<State, string>({
  name: "summarize",
  prompt: (s) => summarizePrompt(s.query, s.passages),
  parse: textParser({ maxLength: 400 }),
  fallback: () => NO_USEFUL_INFORMATION,
  maxNewTokens: 64,
  cutOff: "format-failure",
});

export const update = defineRole<State, string>({
  name: "update",
  prompt: (s) => updatePrompt(s.question, s.knowledge, s.evidence),
  parse: textParser({ maxLength: 400 }),
  fallback: () => "",
  maxNewTokens: 64,
  cutOff: "format-failure",
});

export const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => knowledgeAnswerPrompt(s.knowledge, s.question),
  parse: tagParser("final_answer"),
  fallback: () => "",
  maxNewTokens: 32,
  cutOff: "format-failure",
});

/** a_t at index t; a malformed answer keeps the previous one. */
const setAnswer = (a: string, s: State, turn: number, ok: boolean): Partial<State> => {
  const at = ok ? a : s.answer;
  const answers = s.answers.slice(0, turn);
  answers[turn] = at;
  return { answer: at, answers };
};

/** The graph up to the turn's search; `RetrieveNode` adds `retrieve`, `EvidenceNodes` then `summarize` and `update`. */
type Searched = WorkflowBuilder<State, "plan" | "search">;
type Retrieved = WorkflowBuilder<State, "plan" | "search" | "retrieve">;
export type RetrieveNode = (b: Searched) => Retrieved;
export type EvidenceNodes = (b: Retrieved) => WorkflowBuilder<State, "plan" | "search" | "retrieve" | "summarize" | "update">;

const evidenceRoles: EvidenceNodes = (b) =>
  b
    .role("summarize", summarize, { update: (evidence) => ({ evidence }) })
    .role("update", update, { update: (item, s, _ctx, ok) => (ok ? { knowledge: [...s.knowledge, item] } : undefined) });

/** The turn's passages (none when the retriever failed). */
export const passagesOf = (r: ToolResult<string[]>): Partial<State> => ({ passages: r.ok ? r.value : [] });

const referenceRetrieve: RetrieveNode = (b) => b.tool("retrieve", retrieveTool, { input: (s) => s.query, update: passagesOf });

/**
 * The M-ASK graph; copy-oracle.ts passes other `summarize`/`update` nodes (verbatim passage copies),
 * fresh-train.ts a `retrieve` that searches the episode's own world.
 */
export function searchWorkflow(evidence: EvidenceNodes = evidenceRoles, retrieve: RetrieveNode = referenceRetrieve) {
  const searched: Searched = build<State>({ name: "iterative-search", metrics: qaMetrics })
    .role("plan", plan, { update: (a, s, _ctx, ok) => setAnswer(a, s, 0, ok) })
    .role("search", search, { update: (act, s) => ({ query: act.action === "search" ? act.query || s.question : "" }) });
  return evidence(retrieve(searched))
    .role("answer", answer, { update: (a, s, ctx, ok) => setAnswer(a, s, ctx.turn, ok) })
    .edge(START, "plan")
    .edge("plan", "search")
    .branch("search", (_s, ctx) => ((ctx.output as SearchAction).action === "end" ? END : "retrieve"), [END, "retrieve"])
    .edge("retrieve", "summarize")
    .edge("summarize", "update")
    .edge("update", "answer")
    .edge("answer", "search")
    .loop({ head: "search", maxTurns: MAX_TURNS, onLimit: END })
    .compile();
}

export const workflow = searchWorkflow();

/** F1(a_t) per turn t, from the episode's answers. */
export const f1PerTurn: TurnMetric<QaTask, State> = (t, task) => t.finalState.answers.map((a) => answerF1(a, task));

/** A well-formed `<end>`: the search record that stopped the episode. */
export const isStop = (r: StepRecord): boolean => r.parsed?.ok === true && (r.parsed.value as SearchAction).action === "end";

export const rewards = [
  formatReward({ weight: 1 }),
  perTurnScore<QaTask, State>(f1PerTurn, { roles: ["plan", "answer"], name: "answer-f1" }),
  marginalGain<QaTask, State>(f1PerTurn, { roles: ["search", "summarize", "update"], isStop }),
];

export { metric, taskId, tasks };

export const initialState = (task: QaTask): State => ({
  question: task.question,
  gold: task.answers,
  answer: "",
  knowledge: [],
  answers: [],
  query: "",
  passages: [],
  evidence: "",
});

const ROLES = ["plan", "search", "summarize", "update", "answer"];

/** The per-role cast on models/base-qa at 8 tasks × 8 episodes per step, every model at lr 5e-5. */
const perRoleBig = bigBatchConfig(qaConfig("iterative-search", ROLES, "perRole", QA_MODEL_DIR), 5e-5);

/**
 * The three cast shapes of the parameter-sharing comparison (see ../cast-shapes.ts), and `baseQa`:
 * the LoRA cast on models/base-qa, whose summarize/update copy the retrieved document (with its
 * shared and one-model-per-role counterparts).
 */
export const configs = {
  shared: qaConfig("iterative-search", ROLES, "shared"),
  perRole: qaConfig("iterative-search", ROLES, "perRole"),
  lora: qaConfig("iterative-search", ROLES, "lora"),
  baseQa: qaConfig("iterative-search", ROLES, "lora", QA_MODEL_DIR),
  /** the parameter-sharing comparison again, on models/base-qa (where RL gains something) */
  baseQaShared: qaConfig("iterative-search", ROLES, "shared", QA_MODEL_DIR),
  baseQaPerRole: qaConfig("iterative-search", ROLES, "perRole", QA_MODEL_DIR),
  /**
   * baseQaPerRole with twice the tasks per step (8 × 8 episodes) and half its step (lr 5e-5): at 4 tasks
   * per step the greedy policy gained in 5 steps and then drifted; this one climbs slowly (docs/notes/qa-workflows.md).
   */
  baseQaPerRoleBig: perRoleBig,
  /**
   * baseQaPerRoleBig with rollouts at T = 0.6: at T = 1 the evidence roles' sampled copies are
   * corrupted more often than their greedy ones, so the reward rates copies greedy never makes.
   */
  baseQaPerRoleBigT06: rolloutTemperature(perRoleBig, 0.6),
};

export const config = configs.lora;
