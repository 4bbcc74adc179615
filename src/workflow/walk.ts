// An episode's walk state as one object, and what a walk does with it at each node visit: number
// the visit, run the node, commit its records, outputs and update, record a failure, count loop
// turns. episode.ts drives the walk and route.ts leaves each node; both go through these.
// Once `closed` (the episode's deadline passed) nothing changes it: a node still awaited when the
// deadline fired settles into a walk whose trajectory is already taken.

import type { NodeContext } from "./context.js";
import { END, type LoopSpec, type NodeSpec, type Workflow } from "./graph-types.js";
import { type ExecOptions, type ExecResult, execNode } from "./node-exec.js";
import { applyUpdate } from "./state.js";
import type { EpisodeFailure, EpisodeStatus, StepRecord } from "./trajectory.js";

export const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Everything one episode's walk changes as it goes; one per episode, shared by all its branches. */
export interface EpisodeWalk<S extends object> {
  readonly wf: Workflow<S, string>;
  readonly episodeId: string;
  readonly exec: ExecOptions;
  state: S;
  /** Committed outputs by node, index = visit (fan-out branches may fill them out of order). */
  readonly outputs: Map<string, unknown[]>;
  /** Visits handed out so far by node (including planned fan-out visits not yet run). */
  readonly visits: Map<string, number>;
  /** Turns used by each loop, by its head. */
  readonly loopTurns: Map<string, number>;
  readonly loopsByHead: Map<string, LoopSpec>;
  readonly records: StepRecord[];
  /** Loop-head entries so far. */
  turn: number;
  /** Committed records: the measure of the workflow's maxSteps. */
  steps: number;
  turnLimitHits: number;
  status: EpisodeStatus;
  failure: EpisodeFailure | null;
  /** Set at the deadline: the walk may still be awaiting a node, whose result must change nothing. */
  closed: boolean;
  /** Node visits in flight, oldest first: named by the deadline's failure. */
  readonly running: { node: string; visit: number }[];
}

function cloneState<S>(state: S): S {
  try {
    return structuredClone(state);
  } catch {
    return state; // states holding functions cannot be cloned; nodes must not mutate them anyway
  }
}

/** A fresh walk of `wf` from a copy of `initial`. */
export function startWalk<S extends object>(wf: Workflow<S, string>, episodeId: string, initial: S, exec: ExecOptions): EpisodeWalk<S> {
  return {
    wf,
    episodeId,
    exec,
    state: cloneState(initial),
    outputs: new Map(),
    visits: new Map(),
    loopTurns: new Map(),
    loopsByHead: new Map(wf.loops.map((l) => [l.head, l])),
    records: [],
    turn: 0,
    steps: 0,
    turnLimitHits: 0,
    status: "done",
    failure: null,
    closed: false,
    running: [],
  };
}

/** The `outputs(node)` that node and route contexts hand to user code: a copy, so it cannot edit the walk's. */
export function outputsReader<S extends object>(w: EpisodeWalk<S>): (node: string) => readonly unknown[] {
  return (node) => [...(w.outputs.get(node) ?? [])];
}

/** Hands out the next visit number of `node`. */
export function nextVisit<S extends object>(w: EpisodeWalk<S>, node: string): number {
  const v = w.visits.get(node) ?? 0;
  w.visits.set(node, v + 1);
  return v;
}

/** A node's context outside any fan-out, with `extra` for branch nodes and joins. */
export function nodeContext<S extends object>(w: EpisodeWalk<S>, node: string, visit: number, extra: Partial<NodeContext>): NodeContext {
  return {
    episodeId: w.episodeId,
    node,
    visit,
    turn: w.turn,
    item: undefined,
    branch: null,
    prev: undefined,
    branchOutputs: undefined,
    outputs: outputsReader(w),
    ...extra,
  };
}

/** Runs one node visit against `at` (the walk's state or a branch's), listed as running meanwhile. */
export async function runNode<S extends object>(w: EpisodeWalk<S>, spec: NodeSpec<S>, at: S, ctx: NodeContext): Promise<ExecResult<S>> {
  const me = { node: ctx.node, visit: ctx.visit };
  w.running.push(me);
  try {
    return await execNode(spec, at, ctx, w.wf.snapshot, w.exec);
  } finally {
    w.running.splice(w.running.indexOf(me), 1);
  }
}

function setOutput<S extends object>(w: EpisodeWalk<S>, node: string, visit: number, output: unknown): void {
  const byVisit = w.outputs.get(node) ?? [];
  byVisit[visit] = output;
  w.outputs.set(node, byVisit);
}

/** Adds a visit's records (an agent's role calls first) and, when it succeeded, its output and update. */
export function commit<S extends object>(w: EpisodeWalk<S>, r: ExecResult<S>): void {
  if (w.closed) return;
  for (const call of r.calls ?? []) {
    w.records.push({ index: w.records.length, ...call });
    w.steps++;
    setOutput(w, call.node, call.visit, call.output);
  }
  if (r.record) {
    w.records.push({ index: w.records.length, ...r.record });
    w.steps++;
  }
  if (!r.ok) return;
  setOutput(w, r.record.node, r.record.visit, r.output);
  w.state = applyUpdate(w.state, r.update, w.wf.reducers);
}

/** Ends the episode with an error (the latest one wins), unless its deadline already closed it. */
export function fail<S extends object>(w: EpisodeWalk<S>, f: EpisodeFailure): void {
  if (w.closed) return;
  w.status = "error";
  w.failure = f;
}

/** Entering a loop head starts a turn, or goes to onLimit once the loop used its turns. */
export function enter<S extends object>(w: EpisodeWalk<S>, target: string): string {
  for (let hops = 0; target !== END && hops <= w.wf.loops.length; hops++) {
    const loop = w.loopsByHead.get(target);
    if (!loop) return target;
    const used = w.loopTurns.get(target) ?? 0;
    if (used < loop.maxTurns) {
      w.loopTurns.set(target, used + 1);
      w.turn++;
      return target;
    }
    w.turnLimitHits++;
    target = loop.onLimit;
  }
  return target;
}
