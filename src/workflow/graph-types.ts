// The data types of a workflow graph: node kinds, outgoing edges and loops (the contexts nodes and
// routing functions receive are in context.ts). Building lives in graph.ts, walking in episode.ts.

import type { ChatMessage, Role, Sampling } from "./role.js";
import type { NodeContext, RouteContext } from "./context.js";
import type { RoleCallResult } from "./role-call.js";
import type { ParsedOutput, SampleHandle } from "./trajectory.js";
import type { Reducers, StateUpdate } from "./state.js";
import type { Tool, ToolResult } from "./tool.js";

/** The entry pseudo-node: `edge(START, "first")`. */
export const START = "__start__";
/** The exit pseudo-node: `edge("last", END)`. */
export const END = "__end__";
export type Start = typeof START;
export type End = typeof END;

/** A node's update: a partial state, or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: lets update functions with no return statement type-check
export type NodeUpdate<S> = StateUpdate<S> | undefined | void;

export interface RoleNode<S> {
  kind: "role";
  name: string;
  role: Role<S, unknown>;
  /** Turns the parsed value (or the fallback, when `ok` is false) into a state update. */
  update?: (value: unknown, state: S, ctx: NodeContext, ok: boolean) => NodeUpdate<S>;
}

export interface ToolNode<S> {
  kind: "tool";
  name: string;
  tool: Tool<unknown, unknown>;
  input: (state: S, ctx: NodeContext) => unknown;
  update?: (result: ToolResult<unknown>, state: S, ctx: NodeContext) => NodeUpdate<S>;
  timeoutMs?: number;
}

export interface FunctionNode<S> {
  kind: "function";
  name: string;
  run: (state: S, ctx: NodeContext) => NodeUpdate<S> | Promise<NodeUpdate<S>>;
  /** Deadline of one run (ms); default: the workflow's nodeTimeoutMs, then the runner's. */
  timeoutMs?: number;
}

/** One role call an agent node makes (the gateway turns an HTTP call into one). */
export interface AgentCallRequest {
  role: string;
  /** The record's node (default: the agent node) and turn (default: the episode's); visits count per node. */
  node?: string;
  turn?: number;
  messages: ChatMessage[];
  tools?: readonly unknown[];
  /** The call continues the reply of this earlier sample of the episode (`messages[replayed]`). */
  extend?: { sample: SampleHandle; replayed: number };
  /** The client's sampling; the run's own settings override it. */
  sampling?: Partial<Sampling>;
  /** At most the run's cap (`sampling.maxNewTokens`; absent: the cap), lowered to what the context leaves after the prompt. */
  maxNewTokens?: number;
  stop?: readonly string[];
  /** Return each output token's text and sampling log-prob. */
  logprobs?: boolean;
  /** With `logprobs`: also this many most likely alternatives per output token (1–20). */
  topLogprobs?: number;
  /** Hears the output text as it decodes (streaming clients). */
  onText?: (delta: string) => void;
  /** Turns what came back into the record's parsed value (format failures included) and output. */
  parse: (result: RoleCallResult) => { parsed: ParsedOutput; output: unknown };
}

/** What an agent node's run receives: its episode, its deadline, and the way to call roles. */
export interface AgentIO {
  readonly episodeId: string;
  /** The episode's turn when the node runs: a call's turn unless it names its own. */
  readonly turn: number;
  /** Aborted when the node's or the episode's deadline passes. */
  readonly signal: AbortSignal;
  /** Makes one role call; it becomes a role record of this node (visit = call number). */
  call(req: AgentCallRequest): Promise<RoleCallResult>;
}

/**
 * A node whose code makes any number of role calls (an agent written with an SDK, through the
 * gateway). Each call is a record; the node's own record (visit = number of calls) holds its update.
 */
export interface AgentNode<S> {
  kind: "agent";
  name: string;
  /** The role names it may call; the cast maps them like any role. */
  roles: readonly string[];
  run: (state: S, io: AgentIO) => Promise<NodeUpdate<S>>;
  /** Deadline of the whole run (ms); default: the episode's. */
  timeoutMs?: number;
}

export type NodeSpec<S> = RoleNode<S> | ToolNode<S> | FunctionNode<S> | AgentNode<S>;

/** How the walk leaves a node: one edge, a conditional edge, or a fan-out with its join. */
export type Outgoing<S> =
  | { kind: "edge"; to: string }
  | { kind: "branch"; route: (state: S, ctx: RouteContext) => string; targets: readonly string[] }
  | { kind: "fanOut"; over: (state: S, ctx: RouteContext) => readonly unknown[]; branch: readonly string[]; join: string };

/** A loop: entering `head` starts a turn; once `maxTurns` turns ran, entering `head` goes to `onLimit`. */
export interface LoopSpec {
  head: string;
  maxTurns: number;
  onLimit: string;
}

/** The role names a workflow's nodes call (role nodes' roles, then agent nodes' roles), in node order. */
export function workflowRoles<S>(wf: Pick<Workflow<S>, "nodes">): string[] {
  const out: string[] = [];
  const add = (r: string) => !out.includes(r) && out.push(r);
  for (const n of wf.nodes.values()) {
    if (n.kind === "role") add(n.role.name);
    else if (n.kind === "agent") n.roles.forEach(add);
  }
  return out;
}

/** A compiled, validated workflow. Plain data: the runner walks it. */
export interface Workflow<S, N extends string = string> {
  readonly name: string;
  readonly nodes: ReadonlyMap<N, NodeSpec<S>>;
  readonly outgoing: ReadonlyMap<string, Outgoing<S>>;
  readonly loops: readonly LoopSpec[];
  readonly reducers: Reducers<S>;
  /** Node runs allowed per episode, fan-out branches included. */
  readonly maxSteps: number;
  /** The JSON snapshot of the state kept in each record as "state before". */
  readonly snapshot: (state: S) => unknown;
  /** Task metrics computed from the final state, copied into the trajectory's metrics. */
  readonly metrics: ((state: S) => Record<string, number>) | undefined;
  /** Default deadline of function nodes (ms) that set none; unset: the runner's. */
  readonly nodeTimeoutMs?: number;
}
