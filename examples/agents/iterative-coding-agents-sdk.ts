// Iterative coding written with the OpenAI Agents SDK (`@openai/agents`) in its default configuration —
// the same plan → code → verify → reflect loop as examples/workflows/iterative-coding and
// examples/agents/iterative-coding.ts, one `Agent` per role and one `run()` per role call:
//
//   maso train examples/agents/iterative-coding-agents-sdk.ts
//
// Nothing here names maso's gateway: the SDK's default model provider speaks the Responses API with a
// client built from OPENAI_BASE_URL / OPENAI_API_KEY, which `maso train` points at its gateway before
// importing this file, and the gateway attributes each call to the episode that makes it. Prompts,
// parsers, verifier, tasks, run config and the reward rule are the workflow's (see iterative-coding.ts),
// so greedy episodes make the same calls as the DSL workflow's.
import { Agent, ModelBehaviorError, run } from "@openai/agents";
import { parseRoleOutput, type Role } from "maso";
import type { AgentResult } from "maso/gateway";
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
export const config = { ...sameRun, name: "iterative-coding-agents-sdk" };

type CodingRole = Role<CodingState, string>;

/** One agent per role; the requested `model` is the role's name, the reply length the role's. */
const agents = new Map<CodingRole, Agent>(
  [planRole, codeRole, reflectRole].map((role) => [
    role,
    new Agent({ name: role.name, model: role.name, modelSettings: { maxTokens: role.maxNewTokens } }),
  ]),
);

/** A role's prompt as the SDK takes it: an optional system message as `instructions`, the user message as input. */
function promptOf(role: CodingRole, s: CodingState): { instructions?: string; input: string } {
  const messages = role.prompt(s, undefined as never);
  const bad = new Error(`${role.name}: this agent sends prompts of [system?, user] messages`);
  if (typeof messages === "string") throw bad;
  const [system, user] = messages[0]?.role === "system" ? messages : [undefined, ...messages];
  if (user?.role !== "user" || messages.length !== (system ? 2 : 1)) throw bad;
  return { ...(system && { instructions: system.content }), input: user.content };
}

interface Answer {
  /** The response id (`resp_…`), undefined when the reply was cut off (see ask()). */
  role: string;
  turn: number;
  ok: boolean;
  value: string;
}

export async function agent(task: Task): Promise<AgentResult> {
  const s: CodingState = initialState(task);
  const ask = async (role: CodingRole, turn: number): Promise<Answer> => {
    const { instructions, input } = promptOf(role, s);
    const base = agents.get(role)!;
    // the call's place in the loop, sent as the Responses request's metadata (providerData is merged
    // into the request body), so seeds and (task, role, turn) baselines are the workflow's
    const settings = { ...base.modelSettings, providerData: { metadata: { maso_node: role.name, maso_turn: String(turn) } } };
    try {
      const r = await run(base.clone({ instructions, modelSettings: settings }), input);
      const text = r.finalOutput ?? "";
      const parsed = parseRoleOutput(role, text, "stop", role.maxNewTokens);
      const value = parsed.ok ? parsed.value : (role.fallback(text, parsed.reason) ?? "");
      return { role: role.name, turn, ok: parsed.ok, value };
    } catch (e) {
      // A reply cut off at maxTokens comes back as an `incomplete` response, which the SDK throws as a
      // ModelBehaviorError carrying neither the text nor the response id (so rewards are keyed by label). The workflow scores a cut-off
      // reply as a format failure whatever its text (cutOff: "format-failure"), and so does this.
      // Anything else (the gateway unreachable, the episode's deadline) fails the episode.
      if (!(e instanceof ModelBehaviorError)) throw e;
      return { role: role.name, turn, ok: false, value: role.fallback("", "cut off") ?? "" };
    }
  };

  const calls: Answer[] = [];
  const passRate: number[] = [0]; // R_0 = 0
  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    const plan = await ask(planRole, turn);
    s.plan = plan.value;
    const code = await ask(codeRole, turn);
    s.code = code.value;
    calls.push(plan, code);
    const { result, feedback } = await verifyCode({ code: s.code, tests: s.tests });
    s.results.push({ turn, passRate: result.passRate, passed: result.passed, total: result.total, feedback });
    passRate[turn] = result.passRate;
    if (result.passRate === 1 || turn === MAX_TURNS) break;
    const reflect = await ask(reflectRole, turn);
    s.reflection = reflect.value;
    calls.push(reflect);
  }

  // the workflow's rule: plan and code at turn t get R_t − R_{t−1}, reflect R_{t+1} − R_t, plus format
  const reward = (c: Answer) =>
    (c.ok ? 0 : -FORMAT_WEIGHT) +
    (c.role === "reflect" ? passRate[c.turn + 1] - passRate[c.turn] : passRate[c.turn] - passRate[c.turn - 1]);
  // keyed by each call's label, "<node>@<turn>": a cut-off call has no response id to key it by
  const callRewards = Object.fromEntries(calls.map((c) => [`${c.role}@${c.turn}`, reward(c)]));
  const formatFailures = calls.filter((c) => !c.ok).length;
  return { callRewards, metrics: { ...episodeMetrics(s), formatFailures } };
}

/** Held-out score: the final pass rate. */
export const metric = (result: AgentResult): number => result.metrics?.passRate ?? 0;
