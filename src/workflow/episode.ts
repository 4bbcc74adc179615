// Walks one episode through a compiled workflow: entry, edges, conditional edges, fan-outs with a
// barrier at the join, loop turn limits, the global step limit and the episode deadline. It never
// throws; failures end the episode. Nothing that settles after the deadline reaches the trajectory.
// The walk's state and per-visit steps live in walk.ts, leaving a node (branches, fan-outs) in route.ts;
// this file drives the walk, closes it at the deadline and turns it into a trajectory.

import type { RouteContext } from "./context.js";
import { withDeadline } from "./deadline.js";
import { END, START, type Workflow } from "./graph-types.js";
import type { ExecOptions } from "./node-exec.js";
import { type Leg, leave } from "./route.js";
import type { Trajectory } from "./trajectory.js";
import { commit, type EpisodeWalk, enter, fail, message, nextVisit, nodeContext, outputsReader, runNode, startWalk } from "./walk.js";

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
  const w = startWalk(wf, input.id, input.state, exec);
  if ((await withDeadline(walkToEnd(w), options.episodeTimeoutMs)).timedOut) {
    closeAtDeadline(w, options.episodeTimeoutMs);
    ended.abort();
  }
  const metrics = userMetrics(w);
  return {
    episodeId: w.episodeId,
    taskId: input.taskId ?? null,
    workflow: wf.name,
    status: w.status,
    error: w.failure,
    records: w.records,
    finalState: w.state,
    outputs: versionedOutputs(w),
    metrics: { ...builtinMetrics(w, performance.now() - t0), ...metrics },
  };
}

/** Walks from START, visiting one node at a time, until END, the step limit, a failure or the deadline closes the walk. */
async function walkToEnd<S extends object>(w: EpisodeWalk<S>): Promise<void> {
  const { wf } = w;
  const routeContext = (from: string, visit: number, output: unknown): RouteContext => ({
    episodeId: w.episodeId,
    from,
    visit,
    turn: w.turn,
    output,
    outputs: outputsReader(w),
  });
  try {
    let step: Leg | null = await leave(w, START, routeContext(START, -1, undefined), wf.outgoing.get(START)!);
    let current = step ? enter(w, step.next) : END;
    let join = step?.join;
    while (step && current !== END && !w.closed) {
      if (w.steps >= wf.maxSteps) {
        w.status = "step_limit";
        break;
      }
      const visit = nextVisit(w, current);
      const r = await runNode(w, wf.nodes.get(current)!, w.state, nodeContext(w, current, visit, { branchOutputs: join }));
      if (w.closed) break;
      commit(w, r);
      if (!r.ok) {
        fail(w, r.failure);
        break;
      }
      step = await leave(w, current, routeContext(current, visit, r.output), wf.outgoing.get(current)!);
      if (!step || w.closed) break;
      current = enter(w, step.next);
      join = step.join;
    }
  } catch (err) {
    // reducers and snapshots are user code too; anything left lands here
    fail(w, { code: "EPISODE_FAILED", message: message(err), node: null, visit: null });
  }
}

/** The deadline passed: the episode fails naming the visits still running, and the walk closes. */
function closeAtDeadline<S extends object>(w: EpisodeWalk<S>, ms: number): void {
  const at = w.running[0];
  const pending = w.running.map((r) => `"${r.node}" visit ${r.visit}`).join(", ");
  fail(w, {
    code: "EPISODE_TIMEOUT",
    message: `episode "${w.episodeId}" ran past its ${ms} ms deadline (episodeTimeoutMs)${pending ? `; still running: node ${pending}` : ""}`,
    node: at?.node ?? null,
    visit: at?.visit ?? null,
  });
  w.closed = true;
}

/** The workflow's own metrics of the final state; none for a failed episode, and a throw fails it. */
function userMetrics<S extends object>(w: EpisodeWalk<S>): Record<string, number> {
  if (!w.wf.metrics || w.status === "error") return {};
  try {
    return { ...w.wf.metrics(w.state) };
  } catch (err) {
    fail(w, { code: "METRICS_FAILED", message: `metrics() threw: ${message(err)}`, node: null, visit: null });
    return {};
  }
}

/** The metrics every episode reports, counted from its records and walk. */
function builtinMetrics<S extends object>(w: EpisodeWalk<S>, durationMs: number): Record<string, number> {
  const { records } = w;
  const roleRecords = records.filter((r) => r.kind === "role");
  return {
    steps: w.steps,
    turns: w.turn,
    roleCalls: roleRecords.length,
    formatFailures: roleRecords.filter((r) => r.parsed?.ok === false).length,
    toolErrors: records.filter((r) => r.toolResults.some((t) => !t.ok)).length,
    toolTimeouts: records.filter((r) => r.toolResults.some((t) => t.timedOut)).length,
    turnLimitHits: w.turnLimitHits,
    promptTokens: roleRecords.reduce((a, r) => a + (r.promptTokens ?? 0), 0),
    outputTokens: roleRecords.reduce((a, r) => a + (r.outputTokens ?? 0), 0),
    durationMs,
  };
}

/** Outputs by node and visit, with the holes (visits that never committed) as null so they survive JSON. */
function versionedOutputs<S extends object>(w: EpisodeWalk<S>): Record<string, unknown[]> {
  const versioned: Record<string, unknown[]> = {};
  for (const [node, byVisit] of w.outputs) versioned[node] = Array.from(byVisit, (o) => (o === undefined ? null : o));
  return versioned;
}
