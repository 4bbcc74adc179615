// The workflow builder: declare role, tool and function nodes, then edges, conditional edges,
// fan-outs with joins and loops; compile() validates. It never runs anything (see runner.ts).

import { MasoError } from "../errors.js";
import type { NodeContext, RouteContext } from "./context.js";
import {
  type AgentNode,
  END,
  type End,
  type LoopSpec,
  type NodeSpec,
  type NodeUpdate,
  type Outgoing,
  START,
  type Start,
  type Workflow,
} from "./graph-types.js";
import type { Role } from "./role.js";
import type { Reducers } from "./state.js";
import type { Tool, ToolResult } from "./tool.js";
import { validateGraph } from "./validate.js";

export interface WorkflowOptions<S> {
  /** Shown in errors and logs. */
  name?: string;
  /** Per-field reducers (default: replace). */
  reducers?: Reducers<S>;
  /** Node runs allowed per episode, fan-out branches included (default 256). */
  maxSteps?: number;
  /** The "state before" kept in each record (default: a JSON copy of the whole state). */
  snapshot?: (state: S) => unknown;
  /** Task metrics from the final state, e.g. `(s) => ({ f1: f1(s.answer, s.gold) })`. */
  metrics?: (state: S) => Record<string, number>;
  /** Deadline of function nodes that set none (ms; default: the runner's, 60 s unless set). */
  nodeTimeoutMs?: number;
}

export interface FunctionNodeOptions {
  /** Deadline of one run of this node (ms); a run still pending then ends the episode with NODE_TIMEOUT. */
  timeoutMs?: number;
}

export interface RoleNodeOptions<S, T, X = unknown> {
  /** Turns the parsed value (or the role's fallback when `ok` is false) into a state update. */
  update?: (value: T, state: S, ctx: NodeContext<X>, ok: boolean) => NodeUpdate<S>;
}

export interface ToolNodeOptions<S, I, O, X = unknown> {
  /** Builds the tool's input from the state. */
  input: (state: S, ctx: NodeContext<X>) => I;
  /** Turns the result (or `{ ok: false, error }`) into a state update. */
  update?: (result: ToolResult<O>, state: S, ctx: NodeContext<X>) => NodeUpdate<S>;
  /** Overrides the tool's own timeout for this node (ms). */
  timeoutMs?: number;
}

/** A fan-out over items of type `I` through branch nodes `B` (fanOut() checks they accept `I`). */
export interface FanOutSpec<S, N extends string, I = unknown, B extends string = N> {
  /** The list to fan out over; one branch per item, in list order. */
  over: (state: S, ctx: RouteContext) => readonly I[];
  /** The node (or chain of nodes) each branch runs; they see the item as `ctx.item`. */
  branch: B | readonly B[];
  /** The barrier: runs once after every branch finished, with `ctx.branchOutputs` in list order. */
  join: N;
}

export interface LoopOptions<N extends string> {
  /** Entering this node starts a new turn. */
  head: N;
  /** Most turns; entering `head` once more goes to `onLimit` instead. */
  maxTurns: number;
  onLimit: N | End;
}

/** The nodes of `N` that accept fan-out items of type `I` (`Items` maps a node to the item type it declared). */
export type ItemNodes<N extends string, Items, I> = { [K in N]: [I] extends [K extends keyof Items ? Items[K] : unknown] ? K : never }[N];

/**
 * What fanOut() returns when `over`'s items are not what a branch node declared: it has no builder
 * methods, so the next call names the mismatch. (Checked on the result, so `over` still infers `I`.)
 */
export interface FanOutItemMismatch<B extends string> {
  readonly fanOutItemsDoNotMatch: B;
}

/**
 * A workflow under construction. Node names accumulate in `N`, so edges to unknown nodes are type
 * errors; `Items` records the fan-out item type each node declared through its `ctx`.
 */
// biome-ignore lint/complexity/noBannedTypes: {} is the empty record of declared item types
export interface WorkflowBuilder<S, N extends string, Items = {}> {
  /**
   * Adds a node that calls a role (through the runner's RoleCaller). When the output fails the
   * role's parser, the record keeps the raw text and reason, and the walk continues with the
   * role's `fallback` value (`update` gets `ok: false`).
   */
  role<K extends string, T, X = unknown>(
    name: K,
    role: Role<S, T>,
    options?: RoleNodeOptions<S, T, X>,
  ): WorkflowBuilder<S, N | K, Items & Record<K, X>>;
  /**
   * Adds a node that calls a typed tool with a timeout. A tool that throws or times out does not
   * end the episode: the record keeps the error, `update` gets `{ ok: false, error, timedOut }`,
   * the node's output is `{ error }`, and the walk continues along this node's outgoing edge
   * (route on `ctx.output` in a branch() to handle it differently).
   */
  tool<K extends string, I, O, X = unknown>(
    name: K,
    tool: Tool<I, O>,
    options: ToolNodeOptions<S, I, O, X>,
  ): WorkflowBuilder<S, N | K, Items & Record<K, X>>;
  /**
   * Adds a plain function node; it returns a partial state update. An async run has a deadline
   * (`timeoutMs`, else the workflow's `nodeTimeoutMs`, else the runner's): missing it ends the
   * episode with NODE_TIMEOUT.
   */
  fn<K extends string, X = unknown>(
    name: K,
    run: (state: S, ctx: NodeContext<X>) => NodeUpdate<S> | Promise<NodeUpdate<S>>,
    options?: FunctionNodeOptions,
  ): WorkflowBuilder<S, N | K, Items & Record<K, X>>;
  /**
   * Adds an agent node: code that makes its own role calls (`io.call`), each a role record of this
   * node, e.g. an SDK agent served by the gateway. It runs once per episode; its deadline is
   * `timeoutMs`, else the episode's.
   */
  agent<K extends string>(
    name: K,
    roles: readonly string[],
    run: AgentNode<S>["run"],
    options?: FunctionNodeOptions,
  ): WorkflowBuilder<S, N | K, Items>;
  /** `from` always continues to `to`. */
  edge(from: N | Start, to: N | End): WorkflowBuilder<S, N, Items>;
  /** `from` continues to whichever of `targets` `route` returns (a typed function, never a string of code). */
  branch<T extends N | End>(
    from: N | Start,
    route: (state: S, ctx: RouteContext) => T,
    targets: readonly T[],
  ): WorkflowBuilder<S, N, Items>;
  /** After `from`, runs `branch` once per item concurrently, then `join` once (a barrier). */
  fanOut<I, B extends N>(
    from: N | Start,
    spec: FanOutSpec<S, N, I, B>,
  ): [B] extends [ItemNodes<N, Items, I>] ? WorkflowBuilder<S, N, Items> : FanOutItemMismatch<Exclude<B, ItemNodes<N, Items, I>>>;
  /** Declares a loop with a turn counter and a turn limit. */
  loop(options: LoopOptions<N>): WorkflowBuilder<S, N, Items>;
  /** Validates the graph and freezes it; throws a MasoError listing every problem. */
  compile(): Workflow<S, N>;
}

function checkName(name: string, where: string): void {
  if (typeof name !== "string" || name.trim() === "") {
    throw new MasoError("GRAPH_INVALID", `${where}: node name must be a non-empty string`, "name every node");
  }
  if (name === START || name === END) {
    throw new MasoError("GRAPH_INVALID", `${where}: "${name}" is reserved`, "use START and END only as edge endpoints");
  }
}

/**
 * Starts a workflow over state type `S`.
 *
 * @example
 * const wf = workflow<QaState>({ reducers: { evidence: append<string>() } })
 *   .role("decompose", decompose, { update: (queries) => ({ queries }) })
 *   .tool("retrieve", retriever, { input: (_s, ctx: NodeContext<string>) => ({ query: ctx.item, k: 4 }) })
 *   .fn("compose", (_s, ctx) => ({ evidence: ctx.branchOutputs as string[] }))
 *   .role("answer", answer, { update: (answer) => ({ answer }) })
 *   .edge(START, "decompose")
 *   .fanOut("decompose", { over: (s) => s.queries, branch: "retrieve", join: "compose" })
 *   .edge("compose", "answer")
 *   .edge("answer", END)
 *   .compile();
 */
export function workflow<S extends object>(options: WorkflowOptions<S> = {}): WorkflowBuilder<S, never> {
  const name = options.name ?? "workflow";
  const nodes = new Map<string, NodeSpec<S>>();
  const outgoing = new Map<string, Outgoing<S>>();
  const loops: LoopSpec[] = [];

  const addNode = (spec: NodeSpec<S>): void => {
    checkName(spec.name, `workflow "${name}"`);
    if (nodes.has(spec.name)) {
      throw new MasoError("GRAPH_INVALID", `workflow "${name}": node "${spec.name}" is defined twice`, "give each node a unique name");
    }
    nodes.set(spec.name, spec);
  };
  const addOutgoing = (from: string, out: Outgoing<S>): void => {
    if (outgoing.has(from)) {
      throw new MasoError(
        "GRAPH_INVALID",
        `workflow "${name}": node "${from}" already has an outgoing ${outgoing.get(from)!.kind}`,
        "a node has exactly one of edge(), branch() or fanOut(); use branch() to choose between targets",
      );
    }
    outgoing.set(from, out);
  };

  // One untyped object serves every stage of the builder; the interface above carries the types.
  const builder = {
    role(nodeName: string, role: Role<S, unknown>, opts: RoleNodeOptions<S, unknown> = {}) {
      addNode({ kind: "role", name: nodeName, role, update: opts.update });
      return builder;
    },
    tool(nodeName: string, tool: Tool<unknown, unknown>, opts: ToolNodeOptions<S, unknown, unknown>) {
      addNode({ kind: "tool", name: nodeName, tool, input: opts?.input, update: opts?.update, timeoutMs: opts?.timeoutMs });
      return builder;
    },
    /** Adds an agent node: code that calls roles itself (see AgentNode); it runs once per episode. */
    agent(nodeName: string, roles: readonly string[], run: AgentNode<S>["run"], opts: FunctionNodeOptions = {}) {
      addNode({ kind: "agent", name: nodeName, roles: [...roles], run, timeoutMs: opts.timeoutMs });
      return builder;
    },
    fn(nodeName: string, run: (state: S, ctx: NodeContext) => NodeUpdate<S> | Promise<NodeUpdate<S>>, opts: FunctionNodeOptions = {}) {
      addNode({ kind: "function", name: nodeName, run, timeoutMs: opts.timeoutMs });
      return builder;
    },
    edge(from: string, to: string) {
      addOutgoing(from, { kind: "edge", to });
      return builder;
    },
    branch(from: string, route: (state: S, ctx: RouteContext) => string, targets: readonly string[]) {
      addOutgoing(from, { kind: "branch", route, targets: [...(targets ?? [])] });
      return builder;
    },
    fanOut(from: string, spec: FanOutSpec<S, string>) {
      const branch = typeof spec?.branch === "string" ? [spec.branch] : [...(spec?.branch ?? [])];
      addOutgoing(from, { kind: "fanOut", over: spec?.over, branch, join: spec?.join });
      return builder;
    },
    loop(opts: LoopOptions<string>) {
      loops.push({ head: opts.head, maxTurns: opts.maxTurns, onLimit: opts.onLimit });
      return builder;
    },
    compile(): Workflow<S, string> {
      const wf: Workflow<S, string> = {
        name,
        nodes: new Map(nodes),
        outgoing: new Map(outgoing),
        loops: loops.map((l) => ({ ...l })),
        reducers: { ...options.reducers },
        maxSteps: options.maxSteps ?? 256,
        snapshot: options.snapshot ?? ((s: S) => JSON.parse(JSON.stringify(s)) as unknown),
        metrics: options.metrics,
        nodeTimeoutMs: options.nodeTimeoutMs,
      };
      validateGraph(wf);
      return Object.freeze(wf);
    },
  };
  return builder as unknown as WorkflowBuilder<S, never>;
}
