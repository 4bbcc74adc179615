// Leaving a node through its outgoing spec: a plain edge, a conditional edge (its route must name
// one of its targets), or a fan-out whose branches run concurrently on the state at the fan-out and
// meet at a barrier before the join. Failures and the step limit end the walk (they return null).

import type { RouteContext } from "./context.js";
import type { Outgoing } from "./graph-types.js";
import type { ExecResult } from "./node-exec.js";
import { applyUpdate } from "./state.js";
import { commit, type EpisodeWalk, fail, message, nextVisit, nodeContext, runNode } from "./walk.js";

/** Where the walk goes next; after a fan-out, `join` holds each branch's last output for the join node. */
export interface Leg {
  next: string;
  join?: unknown[];
}

/** Leaves `from` through `out`; returns the next node, or null after a failure or the step limit. */
export async function leave<S extends object>(w: EpisodeWalk<S>, from: string, rctx: RouteContext, out: Outgoing<S>): Promise<Leg | null> {
  if (out.kind === "edge") return { next: out.to };
  if (out.kind === "branch") return takeBranch(w, from, rctx, out);
  return fanOut(w, from, rctx, out);
}

function takeBranch<S extends object>(
  w: EpisodeWalk<S>,
  from: string,
  rctx: RouteContext,
  out: Extract<Outgoing<S>, { kind: "branch" }>,
): Leg | null {
  let to: string;
  try {
    to = out.route(w.state, rctx);
  } catch (err) {
    fail(w, { code: "ROUTE_FAILED", message: `branch from "${from}" threw: ${message(err)}`, node: from, visit: rctx.visit });
    return null;
  }
  if (!out.targets.includes(to)) {
    fail(w, {
      code: "ROUTE_INVALID",
      message: `branch from "${from}" returned "${String(to)}", not one of its targets [${out.targets.join(", ")}]`,
      node: from,
      visit: rctx.visit,
    });
    return null;
  }
  return { next: to };
}

type FanOut<S> = Extract<Outgoing<S>, { kind: "fanOut" }>;

async function fanOut<S extends object>(w: EpisodeWalk<S>, from: string, rctx: RouteContext, out: FanOut<S>): Promise<Leg | null> {
  let items: readonly unknown[];
  try {
    items = out.over(w.state, rctx);
    if (!Array.isArray(items)) throw new Error(`over() returned ${typeof items}, not a list`);
  } catch (err) {
    fail(w, { code: "FANOUT_FAILED", message: `fan-out from "${from}": ${message(err)}`, node: from, visit: rctx.visit });
    return null;
  }
  // every branch runs to its end, so the whole fan-out must fit in the steps left
  if (w.steps + items.length * out.branch.length > w.wf.maxSteps) {
    w.status = "step_limit";
    return null;
  }
  // visits are assigned in list order before anything runs, so they do not depend on timing
  const planned = items.map(() => out.branch.map((node) => nextVisit(w, node)));
  const fanState = w.state;
  const branches = await Promise.all(items.map((item, i) => runBranch(w, out, fanState, item, i, planned[i])));
  if (w.closed) return null;
  return barrier(w, out, branches);
}

/** Runs one branch's nodes in order on its own copy of the state; stops at its first failure. */
async function runBranch<S extends object>(
  w: EpisodeWalk<S>,
  out: FanOut<S>,
  fanState: S,
  item: unknown,
  i: number,
  visits: number[],
): Promise<ExecResult<S>[]> {
  const done: ExecResult<S>[] = [];
  let local = fanState;
  let prev: unknown;
  for (let j = 0; j < out.branch.length && !w.closed; j++) {
    const node = out.branch[j];
    const ctx = nodeContext(w, node, visits[j], { item, branch: i, prev });
    const r = await runNode(w, w.wf.nodes.get(node)!, local, ctx);
    done.push(r);
    if (!r.ok) break;
    try {
      local = applyUpdate(local, r.update, w.wf.reducers);
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
}

/** The barrier: commits every branch in list order (so records do not depend on timing), then the join runs once. */
function barrier<S extends object>(w: EpisodeWalk<S>, out: FanOut<S>, branches: ExecResult<S>[][]): Leg | null {
  const joinInputs: unknown[] = [];
  for (const results of branches) {
    for (const r of results) {
      commit(w, r);
      // the first failing branch names the episode's error
      if (!r.ok && !w.failure) fail(w, r.failure);
    }
    const last = results[results.length - 1];
    joinInputs.push(last?.ok ? last.output : null);
  }
  if (w.failure) return null;
  return { next: out.join, join: joinInputs };
}
