// Runs one node visit (role, tool or function) against a given state and returns its update,
// output and record. It never mutates the state and never throws: user-code errors and missed
// deadlines come back as failures.

import { NEW_TOKEN_DEFAULTS } from "../defaults.js";
import { DEFAULT_NODE_TIMEOUT_MS, MAX_TIMEOUT_MS, withDeadline } from "./deadline.js";
import type { NodeContext } from "./context.js";
import type { AgentIO, AgentNode, FunctionNode, NodeSpec, NodeUpdate, RoleNode, ToolNode } from "./graph-types.js";
import { type ChatMessage, DEFAULT_SAMPLING, parseRoleOutput, type Sampling } from "./role.js";
import { callTool } from "./tool.js";
import type { EpisodeFailure, StepRecord } from "./trajectory.js";
import { type TokenCounter, truncateMessages } from "./truncate.js";
import type { RoleCaller, RoleCallRequest, RoleCallResult } from "./role-call.js";

export interface ExecOptions {
  caller: RoleCaller;
  countTokens: TokenCounter;
  /** Per role, by name: counts with that role's model's tokenizer (before `countTokens`). */
  roleTokenCounters?: Readonly<Record<string, TokenCounter>>;
  sampling: Partial<Sampling> | undefined;
  roleSampling?: Readonly<Record<string, Partial<Sampling>>>;
  maxNewTokens?: number;
  /** Deadline of function nodes that set none (ms; default DEFAULT_NODE_TIMEOUT_MS). */
  nodeTimeoutMs?: number;
  /** Fires when the episode ended (its deadline): pending node and tool deadlines stop waiting. */
  episodeEnded?: AbortSignal;
}

/**
 * A finished visit: the record lacks only its index, which the episode assigns on commit. An agent
 * node's role calls come first, as `calls` (each its own record, committed before `record`).
 */
export type ExecResult<S> =
  | { ok: true; update: NodeUpdate<S>; output: unknown; record: Omit<StepRecord, "index">; calls?: Omit<StepRecord, "index">[] }
  | { ok: false; failure: EpisodeFailure; record: Omit<StepRecord, "index"> | null; calls?: Omit<StepRecord, "index">[] };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function blankRecord(ctx: NodeContext, spec: NodeSpec<unknown>, stateBefore: unknown): Omit<StepRecord, "index"> {
  return {
    episodeId: ctx.episodeId,
    node: ctx.node,
    kind: spec.kind,
    role: spec.kind === "role" ? spec.role.name : null,
    model: null,
    turn: ctx.turn,
    visit: ctx.visit,
    branch: ctx.branch,
    stateBefore,
    prompt: null,
    promptTruncation: null,
    rawOutput: null,
    parsed: null,
    toolResults: [],
    output: null,
    sampleHandle: null,
    promptTokens: null,
    outputTokens: null,
    ms: 0,
  };
}

function isMessages(x: unknown): x is ChatMessage[] {
  return Array.isArray(x) && x.every((m) => m && typeof m === "object" && typeof m.role === "string" && typeof m.content === "string");
}

/** What differs between a role node's call and an agent's: the rest is {@link roleCallRequest}'s. */
type CallSpec = Pick<RoleCallRequest, "role" | "node" | "visit" | "turn" | "stop" | "fitContext" | "logprobs" | "topLogprobs"> & {
  /** The caller's sampling (a role's, an agent call's), under the run's and the role's overrides. */
  sampling?: Partial<Sampling>;
  /** The caller's limit, under the run's cap (absent: the cap). */
  maxNewTokens?: number;
  prompt: string | ChatMessage[];
  tools?: readonly unknown[];
  extend?: RoleCallRequest["extend"];
};

/**
 * The request of one role call, role node's or agent's: one set of defaults (sampling over
 * DEFAULT_SAMPLING, the run's `sampling` and `roleSampling` on top; new tokens capped by the run's
 * maxNewTokens, else UNCAPPED_NEW_TOKENS).
 */
export function roleCallRequest(
  episodeId: string,
  c: CallSpec,
  options: Pick<ExecOptions, "sampling" | "roleSampling" | "maxNewTokens">,
): RoleCallRequest {
  const cap = options.maxNewTokens ?? UNCAPPED_NEW_TOKENS;
  const base = {
    episodeId,
    role: c.role,
    node: c.node,
    visit: c.visit,
    turn: c.turn,
    sampling: { ...DEFAULT_SAMPLING, ...c.sampling, ...options.sampling, ...options.roleSampling?.[c.role] },
    stop: c.stop,
    maxNewTokens: Math.min(c.maxNewTokens ?? cap, cap),
    ...(c.fitContext && { fitContext: true }),
    ...(c.logprobs && { logprobs: true, ...(c.topLogprobs && { topLogprobs: c.topLogprobs }) }),
  };
  if (typeof c.prompt === "string") return { ...base, prompt: c.prompt };
  return { ...base, messages: c.prompt, ...(c.tools && { tools: c.tools }), ...(c.extend && { extend: c.extend }) };
}

/** Whether a RoleCaller's answer has the shape a record needs; every role call is checked here. */
function validResult(res: RoleCallResult | undefined): res is RoleCallResult {
  return (
    !!res &&
    typeof res.text === "string" &&
    (res.sampleHandle === null
      ? typeof res.model === "string"
      : !!res.sampleHandle && typeof res.sampleHandle.model === "string" && typeof res.sampleHandle.id === "number")
  );
}

const INVALID_RESULT =
  "the RoleCaller must return { text, sampleHandle: { model, id }, promptTokens, outputTokens } (or sampleHandle: null and model for a sample not kept)";

/** A role call's answer onto its record. */
function recordResult(record: Omit<StepRecord, "index">, res: RoleCallResult): void {
  record.rawOutput = res.text;
  record.sampleHandle = res.sampleHandle && { model: res.sampleHandle.model, id: res.sampleHandle.id };
  record.model = res.sampleHandle?.model ?? res.model!;
  record.promptTokens = Number.isFinite(res.promptTokens) ? res.promptTokens : null;
  record.outputTokens = Number.isFinite(res.outputTokens) ? res.outputTokens : null;
}

/** Runs one node visit. `snapshot` makes the record's "state before". */
export async function execNode<S>(
  spec: NodeSpec<S>,
  state: S,
  ctx: NodeContext,
  snapshot: (state: S) => unknown,
  options: ExecOptions,
): Promise<ExecResult<S>> {
  const t0 = performance.now();
  const failAt = (code: string, what: string, err: unknown, record: Omit<StepRecord, "index"> | null = null): ExecResult<S> => ({
    ok: false,
    failure: { code, message: `node "${ctx.node}" visit ${ctx.visit}: ${what}: ${message(err)}`, node: ctx.node, visit: ctx.visit },
    record,
  });
  let stateBefore: unknown;
  try {
    stateBefore = snapshot(state);
  } catch (err) {
    return failAt("SNAPSHOT_FAILED", "state snapshot failed", err);
  }
  const record = blankRecord(ctx, spec as NodeSpec<unknown>, stateBefore);
  const done = (update: NodeUpdate<S>, output: unknown): ExecResult<S> => {
    record.output = output === undefined ? null : output;
    record.ms = performance.now() - t0;
    return { ok: true, update, output: record.output, record };
  };
  if (spec.kind === "role") return execRole(spec, state, ctx, record, options, failAt, done);
  if (spec.kind === "tool") return execTool(spec, state, ctx, record, options, failAt, done);
  if (spec.kind === "agent") return execAgent(spec, state, ctx, stateBefore, options, failAt, done);
  return execFunction(spec, state, ctx, options, failAt, done);
}

type FailAt<S> = (code: string, what: string, err: unknown, record?: Omit<StepRecord, "index"> | null) => ExecResult<S>;
type Done<S> = (update: NodeUpdate<S>, output: unknown) => ExecResult<S>;

async function execFunction<S>(
  spec: FunctionNode<S>,
  state: S,
  ctx: NodeContext,
  options: ExecOptions,
  failAt: FailAt<S>,
  done: Done<S>,
): Promise<ExecResult<S>> {
  const ms = spec.timeoutMs ?? options.nodeTimeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;
  let update: NodeUpdate<S>;
  try {
    const out = spec.run(state, ctx);
    // only a promise can miss a deadline; a sync run has already finished (no timer for it)
    if (out instanceof Promise || typeof (out as { then?: unknown } | undefined)?.then === "function") {
      const r = await withDeadline(Promise.resolve(out), ms, options.episodeEnded);
      if (r.timedOut) return failAt("NODE_TIMEOUT", "function node", `still running after its ${ms} ms deadline (timeoutMs)`);
      update = r.value;
    } else update = await out;
  } catch (err) {
    return failAt("FUNCTION_FAILED", "function node threw", err);
  }
  return done(update, update ?? null);
}

async function execRole<S>(
  spec: RoleNode<S>,
  state: S,
  ctx: NodeContext,
  record: Omit<StepRecord, "index">,
  options: ExecOptions,
  failAt: FailAt<S>,
  done: Done<S>,
): Promise<ExecResult<S>> {
  const role = spec.role;
  let built: ChatMessage[] | string;
  try {
    built = role.prompt(state, ctx);
  } catch (err) {
    return failAt("PROMPT_FAILED", `role "${role.name}" prompt builder threw`, err);
  }
  if (typeof built !== "string" && !isMessages(built)) {
    return failAt("PROMPT_FAILED", `role "${role.name}" prompt builder`, "must return a string or an array of { role, content } messages");
  }
  if (typeof built !== "string" && role.maxPromptTokens !== undefined) {
    const t = truncateMessages(built, role.maxPromptTokens, options.roleTokenCounters?.[role.name] ?? options.countTokens);
    built = t.items;
    record.promptTruncation = { dropped: t.dropped, tokens: t.tokens, overflow: t.overflow };
  }
  record.prompt = built;
  const req = roleCallRequest(
    ctx.episodeId,
    {
      role: role.name,
      node: ctx.node,
      visit: ctx.visit,
      turn: ctx.turn,
      sampling: role.sampling,
      stop: role.stop,
      maxNewTokens: role.maxNewTokens,
      prompt: built,
    },
    options,
  );
  let res: RoleCallResult;
  try {
    res = await options.caller.call(req);
  } catch (err) {
    return failAt("ROLE_CALL_FAILED", `role call for "${role.name}" failed`, err);
  }
  if (!validResult(res)) return failAt("ROLE_CALL_INVALID", `role call for "${role.name}"`, INVALID_RESULT);
  recordResult(record, res);
  const parsed = parseRoleOutput(role, res.text, res.finishReason, req.maxNewTokens);
  let value: unknown;
  if (parsed.ok) {
    value = parsed.value;
    record.parsed = { ok: true, value: parsed.value };
  } else {
    try {
      value = role.fallback(res.text, parsed.reason);
    } catch (err) {
      return failAt("FALLBACK_FAILED", `role "${role.name}" fallback threw`, err, record);
    }
    record.parsed = { ok: false, reason: parsed.reason, fallback: value === undefined ? null : value };
  }
  let update: NodeUpdate<S>;
  try {
    update = spec.update?.(value, state, ctx, parsed.ok);
  } catch (err) {
    return failAt("UPDATE_FAILED", `update of role node threw`, err, record);
  }
  return done(update, value);
}

async function execTool<S>(
  spec: ToolNode<S>,
  state: S,
  ctx: NodeContext,
  record: Omit<StepRecord, "index">,
  options: ExecOptions,
  failAt: FailAt<S>,
  done: Done<S>,
): Promise<ExecResult<S>> {
  let input: unknown;
  try {
    input = spec.input(state, ctx);
  } catch (err) {
    return failAt("TOOL_INPUT_FAILED", `input of tool "${spec.tool.name}" threw`, err);
  }
  const t0 = performance.now();
  const result = await callTool(spec.tool, input, spec.timeoutMs ?? spec.tool.timeoutMs, options.episodeEnded);
  record.toolResults = [
    {
      tool: spec.tool.name,
      input: input === undefined ? null : input,
      ok: result.ok,
      value: result.ok ? (result.value === undefined ? null : result.value) : null,
      error: result.ok ? null : result.error,
      timedOut: result.ok ? false : result.timedOut,
      ms: performance.now() - t0,
    },
  ];
  let update: NodeUpdate<S>;
  try {
    update = spec.update?.(result, state, ctx);
  } catch (err) {
    return failAt("UPDATE_FAILED", `update of tool node threw`, err, record);
  }
  return done(update, result.ok ? result.value : { error: result.error });
}

/** New tokens of an agent's call that sets no limit, before the context lowers it (src/defaults.ts: the config's largest). */
export const UNCAPPED_NEW_TOKENS = NEW_TOKEN_DEFAULTS.agentCall;

/** Runs an agent node: each `io.call` is a role record (visit = call number); its own record follows them. */
async function execAgent<S>(
  spec: AgentNode<S>,
  state: S,
  ctx: NodeContext,
  stateBefore: unknown,
  options: ExecOptions,
  failAt: FailAt<S>,
  done: Done<S>,
): Promise<ExecResult<S>> {
  if (ctx.visit > 0) return failAt("AGENT_REVISITED", "agent node", "runs once per episode (keep it out of loops and fan-outs)");
  const calls: Omit<StepRecord, "index">[] = [];
  const visits = new Map<string, number>();
  const aborter = new AbortController();
  const onEnd = () => aborter.abort();
  options.episodeEnded?.addEventListener("abort", onEnd, { once: true });
  let closed = false;
  const io: AgentIO = {
    episodeId: ctx.episodeId,
    turn: ctx.turn,
    signal: aborter.signal,
    call: async (c) => {
      if (closed || aborter.signal.aborted) throw new Error(`agent node "${ctx.node}" has finished; no more role calls`);
      if (!spec.roles.includes(c.role))
        throw new Error(`agent node "${ctx.node}" does not call role "${c.role}" (it declares ${spec.roles.join(", ")})`);
      const node = c.node ?? ctx.node;
      const visit = visits.get(node) ?? 0;
      visits.set(node, visit + 1);
      const turn = c.turn ?? ctx.turn;
      const t0 = performance.now();
      const record: Omit<StepRecord, "index"> = {
        ...blankRecord({ ...ctx, node, visit, turn }, spec as NodeSpec<unknown>, stateBefore),
        kind: "role",
        role: c.role,
        prompt: c.messages,
      };
      calls.push(record);
      // the run's cap, else whatever the context leaves: SDKs send large defaults (Anthropic's
      // clients 4096) or none, and a limit the context cannot hold is cut to it, never refused
      const req = roleCallRequest(
        ctx.episodeId,
        { ...c, node, visit, turn, stop: c.stop ?? [], fitContext: true, prompt: c.messages },
        options,
      );
      const res = await options.caller.call(req, c.onText);
      if (!validResult(res)) throw new Error(`role call for "${c.role}": ${INVALID_RESULT}`);
      recordResult(record, res);
      const p = c.parse(res);
      record.parsed = p.parsed;
      record.output = p.output === undefined ? null : p.output;
      record.ms = performance.now() - t0;
      return res;
    },
  };
  const ms = spec.timeoutMs ?? MAX_TIMEOUT_MS;
  try {
    const r = await withDeadline(
      Promise.resolve().then(() => spec.run(state, io)),
      ms,
      options.episodeEnded,
    );
    if (r.timedOut) {
      aborter.abort();
      return { ...failAt("NODE_TIMEOUT", "agent node", `still running after its ${ms} ms deadline (timeoutMs)`), calls: finished(calls) };
    }
    const ended = finished(calls);
    const result = done(r.value, r.value ?? null);
    // the node's own record comes after its calls, so (node, visit) stays unique
    if (result.record) result.record.visit = visits.get(ctx.node) ?? 0;
    return { ...result, calls: ended };
  } catch (err) {
    return { ...failAt("AGENT_FAILED", "agent node threw", err), calls: finished(calls) };
  } finally {
    closed = true;
    options.episodeEnded?.removeEventListener("abort", onEnd);
  }
}

/** The calls that came back: one still waiting for its generation has no sample and is dropped. */
const finished = (calls: Omit<StepRecord, "index">[]) => calls.filter((c) => c.sampleHandle !== null);
