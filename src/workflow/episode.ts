// Walks one episode through a compiled workflow: entry, edges, conditional edges, fan-outs with a
// barrier at the join, loop turn limits, the global step limit and the episode deadline. It never
// throws; failures end the episode. Nothing that settles after the deadline reaches the trajectory.

import { withDeadline } from "./deadline.js";
import type { NodeContext, RouteContext } from "./context.js";
import { END, type NodeSpec, type Outgoing, START, type Workflow } from "./graph-types.js";
import { type ExecOptions, type ExecResult, execNode } from "./node-exec.js";
import { applyUpdate } from "./state.js";
import type { EpisodeFailure, EpisodeStatus, StepRecord, Trajectory } from "./trajectory.js";

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function cloneState<S>(state: S): S {
  try {
    return structuredClone(state);
  } catch {
    return state; // states holding functions cannot be cloned; nodes must not mutate them anyway
  }
}

export interface EpisodeOptions extends ExecOptions {
  /** Deadline of the whole episode (ms): past it, the episode ends with EPISODE_TIMEOUT. */
  episodeTimeoutMs: number;
}

/** One episode to run: its id (unique in the batch), initial state and optional task id. */
export interface EpisodeInput<S> {
  id: string;
  state: S;
  taskId?: string;
}

/**
 * Runs one episode to END, a step limit, a failure or its deadline, and returns its trajectory.
 * Exported for runner.ts; use {@link runEpisodes} for batches.
 */
export async function runEpisode<S extends object>(
  wf: Workflow<S, string>,
  input: EpisodeInput<S>,
  options: EpisodeOptions,
): Promise<Trajectory<S>> {
  const t0 = performance.now();
  const ended = new AbortController();
  const exec: ExecOptions = { ...options, nodeTimeoutMs: wf.nodeTimeoutMs ?? options.nodeTimeoutMs, episodeEnded: ended.signal };
  const episodeId = input.id;
  let state = cloneState(input.state);
  const outputs = new Map<string, unknown[]>();
  const visits = new Map<string, number>();
  const loopTurns = new Map<string, number>();
  const loopsByHead = new Map(wf.loops.map((l) => [l.head, l]));
  const records: StepRecord[] = [];
  let turn = 0;
  let steps = 0;
  let turnLimitHits = 0;
  let status: EpisodeStatus = "done";
  let failure: EpisodeFailure | null = null;
  // set at the deadline: the walk may still be awaiting a node, whose result must change nothing
  let closed = false;
  const running: { node: string; visit: number }[] = [];

  const readOutputs = (node: string): readonly unknown[] => [...(outputs.get(node) ?? [])];
  const nextVisit = (node: string): number => {
    const v = visits.get(node) ?? 0;
    visits.set(node, v + 1);
    return v;
  };
  const nodeCtx = (node: string, visit: number, extra: Partial<NodeContext>): NodeContext => ({
    episodeId,
    node,
    visit,
    turn,
    item: undefined,
    branch: null,
    prev: undefined,
    branchOutputs: undefined,
    outputs: readOutputs,
    ...extra,
  });
  const exec1 = async (spec: NodeSpec<S>, at: S, ctx: NodeContext): Promise<ExecResult<S>> => {
    const me = { node: ctx.node, visit: ctx.visit };
    running.push(me);
    try {
      return await execNode(spec, at, ctx, wf.snapshot, exec);
    } finally {
      running.splice(running.indexOf(me), 1);
    }
  };
  const commit = (r: ExecResult<S>): void => {
    if (closed) return;
    for (const call of r.calls ?? []) {
      records.push({ index: records.length, ...call });
      steps++;
      const byVisit = outputs.get(call.node) ?? [];
      byVisit[call.visit] = call.output;
      outputs.set(call.node, byVisit);
    }
    if (r.record) {
      records.push({ index: records.length, ...r.record });
      steps++;
    }
    if (!r.ok) return;
    const byVisit = outputs.get(r.record.node) ?? [];
    byVisit[r.record.visit] = r.output;
    outputs.set(r.record.node, byVisit);
    state = applyUpdate(state, r.update, wf.reducers);
  };
  const fail = (f: EpisodeFailure): void => {
    if (closed) return;
    status = "error";
    failure = f;
  };

  /** Entering a loop head starts a turn, or goes to onLimit once the loop used its turns. */
  const enter = (target: string): string => {
    for (let hops = 0; target !== END && hops <= wf.loops.length; hops++) {
      const loop = loopsByHead.get(target);
      if (!loop) return target;
      const used = loopTurns.get(target) ?? 0;
      if (used < loop.maxTurns) {
        loopTurns.set(target, used + 1);
        turn++;
        return target;
      }
      turnLimitHits++;
      target = loop.onLimit;
    }
    return target;
  };

  /** Leaves `from` through its outgoing spec; returns the next node, or null after a failure/step limit. */
  const leave = async (from: string, rctx: RouteContext, out: Outgoing<S>): Promise<{ next: string; join?: unknown[] } | null> => {
    if (out.kind === "edge") return { next: out.to };
    if (out.kind === "branch") {
      let to: string;
      try {
        to = out.route(state, rctx);
      } catch (err) {
        fail({ code: "ROUTE_FAILED", message: `branch from "${from}" threw: ${message(err)}`, node: from, visit: rctx.visit });
        return null;
      }
      if (!out.targets.includes(to)) {
        fail({
          code: "ROUTE_INVALID",
          message: `branch from "${from}" returned "${String(to)}", not one of its targets [${out.targets.join(", ")}]`,
          node: from,
          visit: rctx.visit,
        });
        return null;
      }
      return { next: to };
    }
    let items: readonly unknown[];
    try {
      items = out.over(state, rctx);
      if (!Array.isArray(items)) throw new Error(`over() returned ${typeof items}, not a list`);
    } catch (err) {
      fail({ code: "FANOUT_FAILED", message: `fan-out from "${from}": ${message(err)}`, node: from, visit: rctx.visit });
      return null;
    }
    if (steps + items.length * out.branch.length > wf.maxSteps) {
      status = "step_limit";
      return null;
    }
    // visits are assigned in list order before anything runs, so they do not depend on timing
    const planned = items.map(() => out.branch.map((node) => nextVisit(node)));
    const fanState = state;
    const runBranch = async (item: unknown, i: number): Promise<ExecResult<S>[]> => {
      const done: ExecResult<S>[] = [];
      let local = fanState;
      let prev: unknown;
      for (let j = 0; j < out.branch.length && !closed; j++) {
        const node = out.branch[j];
        const ctx = nodeCtx(node, planned[i][j], { item, branch: i, prev });
        const r = await exec1(wf.nodes.get(node)!, local, ctx);
        done.push(r);
        if (!r.ok) break;
        try {
          local = applyUpdate(local, r.update, wf.reducers);
        } catch (err) {
          done[done.length - 1] = {
            ok: false,
            failure: { code: "UPDATE_INVALID", message: message(err), node, visit: ctx.visit },
            record: r.record,
          };
          break;
        }
        prev = r.output;
      }
      return done;
    };
    const branches = await Promise.all(items.map(runBranch));
    if (closed) return null;
    // the barrier: commit every branch in list order, then the join runs once
    const joinInputs: unknown[] = [];
    for (const results of branches) {
      for (const r of results) {
        if (!r.ok) {
          commit(r);
          if (!failure) fail(r.failure);
        } else commit(r);
      }
      const last = results[results.length - 1];
      joinInputs.push(last?.ok ? last.output : null);
    }
    if (failure) return null;
    return { next: out.join, join: joinInputs };
  };

  const walk = async (): Promise<void> => {
    try {
      const entry = wf.outgoing.get(START)!;
      const startCtx: RouteContext = { episodeId, from: START, visit: -1, turn, output: undefined, outputs: readOutputs };
      let step = await leave(START, startCtx, entry);
      let current = step ? enter(step.next) : END;
      let join = step?.join;
      while (step && current !== END && !closed) {
        if (steps >= wf.maxSteps) {
          status = "step_limit";
          break;
        }
        const visit = nextVisit(current);
        const r = await exec1(wf.nodes.get(current)!, state, nodeCtx(current, visit, { branchOutputs: join }));
        if (closed) break;
        commit(r);
        if (!r.ok) {
          fail(r.failure);
          break;
        }
        const rctx: RouteContext = { episodeId, from: current, visit, turn, output: r.output, outputs: readOutputs };
        step = await leave(current, rctx, wf.outgoing.get(current)!);
        if (!step || closed) break;
        current = enter(step.next);
        join = step.join;
      }
    } catch (err) {
      // reducers and snapshots are user code too; anything left lands here
      fail({ code: "EPISODE_FAILED", message: message(err), node: null, visit: null });
    }
  };

  const ms = options.episodeTimeoutMs;
  if ((await withDeadline(walk(), ms)).timedOut) {
    const at = running[0];
    const pending = running.map((r) => `"${r.node}" visit ${r.visit}`).join(", ");
    fail({
      code: "EPISODE_TIMEOUT",
      message: `episode "${episodeId}" ran past its ${ms} ms deadline (episodeTimeoutMs)${pending ? `; still running: node ${pending}` : ""}`,
      node: at?.node ?? null,
      visit: at?.visit ?? null,
    });
    closed = true;
    ended.abort();
  }

  let metrics: Record<string, number> = {};
  if (wf.metrics && (status as EpisodeStatus) !== "error") {
    try {
      metrics = { ...wf.metrics(state) };
    } catch (err) {
      fail({ code: "METRICS_FAILED", message: `metrics() threw: ${message(err)}`, node: null, visit: null });
    }
  }
  const roleRecords = records.filter((r) => r.kind === "role");
  const builtins: Record<string, number> = {
    steps,
    turns: turn,
    roleCalls: roleRecords.length,
    formatFailures: roleRecords.filter((r) => r.parsed?.ok === false).length,
    toolErrors: records.filter((r) => r.toolResults.some((t) => !t.ok)).length,
    toolTimeouts: records.filter((r) => r.toolResults.some((t) => t.timedOut)).length,
    turnLimitHits,
    promptTokens: roleRecords.reduce((a, r) => a + (r.promptTokens ?? 0), 0),
    outputTokens: roleRecords.reduce((a, r) => a + (r.outputTokens ?? 0), 0),
    durationMs: performance.now() - t0,
  };
  const versioned: Record<string, unknown[]> = {};
  for (const [node, byVisit] of outputs) versioned[node] = Array.from(byVisit, (o) => (o === undefined ? null : o));
  return {
    episodeId,
    taskId: input.taskId ?? null,
    workflow: wf.name,
    status,
    error: failure,
    records,
    finalState: state,
    outputs: versioned,
    metrics: { ...builtins, ...metrics },
  };
}
