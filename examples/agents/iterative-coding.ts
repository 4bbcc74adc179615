// Iterative coding written as a plain agent with the `openai` SDK — the same plan → code → verify →
// reflect loop as examples/workflows/iterative-coding, but as ordinary async code that maso trains
// through its OpenAI-compatible gateway. It reuses that workflow's prompts, parsers, verifier, tasks
// and run config, so the two versions can be compared call for call:
//
//   maso train examples/agents/iterative-coding.ts        # or: MASO_DEMO_WORKFLOW=<this file> npm run demo
//
// Each call names its place in the loop (metadata maso_node / maso_turn), so seeds and the (task,
// role, turn) baselines are the DSL run's; rewards are the DSL's rule, reported per call: plan and
// code at turn t get R_t − R_{t−1}, reflect at turn t gets R_{t+1} − R_t, each plus its format term.
import OpenAI from "openai";
import { parseRoleOutput, type Role } from "maso";
import type { AgentContext, AgentResult } from "maso/gateway";
import { codeRole, planRole, reflectRole } from "../workflows/iterative-coding/roles.js";
import { type CodingState, episodeMetrics, MAX_TURNS } from "../workflows/iterative-coding/state.js";
import { verifyCode } from "../workflows/iterative-coding/verifier.js";
import {
  config as workflowConfig,
  initialState,
  type Task,
  tasks as codingTasks,
  taskId as codingTaskId,
} from "../workflows/iterative-coding/workflow.js";

export const roles = ["plan", "code", "reflect"];
export const tasks = codingTasks;
export const taskId = codingTaskId;

/** The format term's weight: a malformed output costs a tenth of a full pass-rate gain, as in the workflow. */
const FORMAT_WEIGHT = workflowConfig.rewardWeights.format;
const { rewardWeights: _formatWeights, ...sameRun } = workflowConfig;

/** The workflow's run config: same models, cast, algorithm, schedule and evaluation. */
export const config = { ...sameRun, name: "iterative-coding-agent" };

interface Answer {
  id: string;
  ok: boolean;
  value: string;
}

export async function agent(task: Task, { baseURL, apiKey }: AgentContext): Promise<AgentResult> {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 2 });
  const s: CodingState = initialState(task);
  const ask = async (role: Role<CodingState, string>, turn: number): Promise<Answer> => {
    const messages = role.prompt(s, undefined as never) as OpenAI.ChatCompletionMessageParam[];
    const r = await client.chat.completions.create({
      model: role.name,
      messages,
      max_tokens: role.maxNewTokens,
      metadata: { maso_node: role.name, maso_turn: String(turn) },
    });
    const choice = r.choices[0];
    const text = choice.message.content ?? "";
    const parsed = parseRoleOutput(role, text, choice.finish_reason, role.maxNewTokens);
    return { id: r.id, ok: parsed.ok, value: parsed.ok ? parsed.value : (role.fallback(text, parsed.reason) ?? "") };
  };

  const calls: { answer: Answer; role: string; turn: number }[] = [];
  const passRate: number[] = [0]; // R_0 = 0
  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    const plan = await ask(planRole, turn);
    s.plan = plan.value;
    const code = await ask(codeRole, turn);
    s.code = code.value;
    calls.push({ answer: plan, role: "plan", turn }, { answer: code, role: "code", turn });
    const { result, feedback } = await verifyCode({ code: s.code, tests: s.tests });
    s.results.push({ turn, passRate: result.passRate, passed: result.passed, total: result.total, feedback });
    passRate[turn] = result.passRate;
    if (result.passRate === 1 || turn === MAX_TURNS) break;
    const reflect = await ask(reflectRole, turn);
    s.reflection = reflect.value;
    calls.push({ answer: reflect, role: "reflect", turn });
  }

  const callRewards: Record<string, number> = {};
  for (const { answer, role, turn } of calls) {
    const gain = role === "reflect" ? passRate[turn + 1] - passRate[turn] : passRate[turn] - passRate[turn - 1];
    callRewards[answer.id] = (answer.ok ? 0 : -FORMAT_WEIGHT) + gain;
  }
  // the parse happens here, not in the gateway, so the agent reports the workflow's format-failure count
  const formatFailures = calls.filter((c) => !c.answer.ok).length;
  return { callRewards, metrics: { ...episodeMetrics(s), formatFailures } };
}

/** Held-out score: the final pass rate. */
export const metric = (result: AgentResult): number => result.metrics?.passRate ?? 0;
