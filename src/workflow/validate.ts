// compile()'s checks: every problem in a workflow graph, reported together in one MasoError.
// Reads the graph only; it never runs a node or a routing function.

import { MasoError } from "../errors.js";
import { MAX_TIMEOUT_MS } from "./deadline.js";
import { END, START, type Workflow } from "./graph-types.js";

const validTimeout = (ms: unknown): boolean => typeof ms === "number" && ms > 0 && ms <= MAX_TIMEOUT_MS;

/** Targets the walk may take from `from` (fan-out: its branch chain heads and its join). */
function successors(wf: Workflow<unknown>, from: string): string[] {
  const out = wf.outgoing.get(from);
  const next: string[] = [];
  if (out?.kind === "edge") next.push(out.to);
  else if (out?.kind === "branch") next.push(...out.targets);
  else if (out?.kind === "fanOut") next.push(...out.branch, out.join);
  // inside a fan-out chain, each node leads to the next one and the last to the join
  for (const fo of wf.outgoing.values()) {
    if (fo.kind !== "fanOut") continue;
    const i = fo.branch.indexOf(from);
    if (i >= 0) next.push(i + 1 < fo.branch.length ? fo.branch[i + 1] : fo.join);
  }
  for (const loop of wf.loops) if (next.includes(loop.head)) next.push(loop.onLimit);
  return next;
}

function reach(starts: string[], step: (n: string) => string[]): Set<string> {
  const seen = new Set<string>(starts);
  const todo = [...starts];
  while (todo.length > 0) {
    for (const n of step(todo.pop()!)) {
      if (!seen.has(n)) {
        seen.add(n);
        todo.push(n);
      }
    }
  }
  return seen;
}

/**
 * Throws a MasoError (code GRAPH_INVALID) listing every problem: unknown nodes, a fan-out without
 * its join, dead ends, unreachable nodes, nodes that can never reach END, bad loops.
 */
// biome-ignore lint/suspicious/noExplicitAny: validation reads any state type
export function validateGraph(wf: Workflow<any>): void {
  const problems: string[] = [];
  const known = (n: unknown): boolean => typeof n === "string" && wf.nodes.has(n);
  const knownOrEnd = (n: unknown): boolean => n === END || known(n);

  if (!Number.isInteger(wf.maxSteps) || wf.maxSteps < 1) problems.push(`maxSteps must be a positive integer (got ${wf.maxSteps})`);
  if (wf.nodeTimeoutMs !== undefined && !validTimeout(wf.nodeTimeoutMs))
    problems.push(`nodeTimeoutMs must be a number of milliseconds in (0, ${MAX_TIMEOUT_MS}] (got ${wf.nodeTimeoutMs})`);
  if (!wf.outgoing.has(START)) problems.push("no entry: add edge(START, <first node>) or branch(START, …)");

  const branchOwner = new Map<string, string>();
  for (const [from, out] of wf.outgoing) {
    if (from !== START && !known(from)) problems.push(`${out.kind} from unknown node "${from}"`);
    if (out.kind === "edge") {
      if (!knownOrEnd(out.to)) problems.push(`edge "${from}" -> "${out.to}": unknown node "${out.to}"`);
    } else if (out.kind === "branch") {
      if (typeof out.route !== "function") problems.push(`branch from "${from}": route must be a function`);
      if (out.targets.length === 0) problems.push(`branch from "${from}": list its possible targets`);
      for (const t of out.targets) if (!knownOrEnd(t)) problems.push(`branch from "${from}": unknown target "${t}"`);
    } else {
      if (typeof out.over !== "function") problems.push(`fan-out from "${from}": over must be a function returning a list`);
      if (out.join === undefined) problems.push(`fan-out from "${from}" has no join node: pass fanOut(from, { over, branch, join })`);
      else if (!known(out.join)) problems.push(`fan-out from "${from}": unknown join node "${out.join}"`);
      if (out.branch.length === 0) problems.push(`fan-out from "${from}": branch must name at least one node`);
      for (const b of out.branch) {
        if (!known(b)) problems.push(`fan-out from "${from}": unknown branch node "${b}"`);
        else if (branchOwner.has(b))
          problems.push(`node "${b}" is in the branches of two fan-outs ("${branchOwner.get(b)}" and "${from}")`);
        else branchOwner.set(b, from);
        if (b === out.join) problems.push(`fan-out from "${from}": "${b}" cannot be both a branch node and the join`);
      }
    }
  }

  for (const [member, owner] of branchOwner) {
    if (wf.outgoing.has(member)) {
      problems.push(
        `node "${member}" runs inside the fan-out from "${owner}" and cannot have its own outgoing edge (the branch chain leads to the join)`,
      );
    }
    for (const [from, out] of wf.outgoing) {
      const targets = out.kind === "edge" ? [out.to] : out.kind === "branch" ? out.targets : [out.join];
      if (targets.includes(member))
        problems.push(`node "${member}" runs inside the fan-out from "${owner}" but "${from}" also leads to it`);
    }
  }

  const heads = new Set<string>();
  for (const loop of wf.loops) {
    if (!known(loop.head)) problems.push(`loop: unknown head node "${loop.head}"`);
    if (heads.has(loop.head)) problems.push(`loop: "${loop.head}" heads two loops`);
    heads.add(loop.head);
    if (branchOwner.has(loop.head)) problems.push(`loop: head "${loop.head}" runs inside a fan-out; loop around the fan-out instead`);
    if (!Number.isInteger(loop.maxTurns) || loop.maxTurns < 1) problems.push(`loop at "${loop.head}": maxTurns must be a positive integer`);
    if (!knownOrEnd(loop.onLimit)) problems.push(`loop at "${loop.head}": unknown onLimit node "${loop.onLimit}"`);
    if (loop.onLimit === loop.head) problems.push(`loop at "${loop.head}": onLimit cannot be the head itself`);
  }

  const tools = new Set<string>();
  for (const [n, spec] of wf.nodes) {
    if (spec.kind === "tool") {
      if (!spec.tool || typeof spec.tool.run !== "function") problems.push(`tool node "${n}": not a tool (use defineTool)`);
      else tools.add(spec.tool.name);
      if (typeof spec.input !== "function") problems.push(`tool node "${n}": input must be a function of the state`);
    }
    if (spec.kind === "role" && (!spec.role || typeof spec.role.prompt !== "function"))
      problems.push(`role node "${n}": not a role (use defineRole)`);
    if (spec.kind === "function" && typeof spec.run !== "function") problems.push(`function node "${n}": run must be a function`);
    if (spec.kind === "agent") {
      if (typeof spec.run !== "function") problems.push(`agent node "${n}": run must be a function`);
      if (!Array.isArray(spec.roles) || spec.roles.length === 0 || spec.roles.some((r) => typeof r !== "string" || r === ""))
        problems.push(`agent node "${n}": roles must be a non-empty list of role names`);
    }
    if (
      (spec.kind === "function" || spec.kind === "tool" || spec.kind === "agent") &&
      spec.timeoutMs !== undefined &&
      !validTimeout(spec.timeoutMs)
    )
      problems.push(`${spec.kind} node "${n}": timeoutMs must be a number of milliseconds in (0, ${MAX_TIMEOUT_MS}]`);
    if (!wf.outgoing.has(n) && !branchOwner.has(n))
      problems.push(`node "${n}" has no outgoing edge and is not END: add edge("${n}", END) or another edge`);
  }
  for (const [n, spec] of wf.nodes) {
    if (spec.kind !== "role" || !spec.role?.tools) continue;
    for (const t of spec.role.tools)
      if (!tools.has(t)) problems.push(`role "${spec.role.name}" at node "${n}" may use tool "${t}", which no tool node defines`);
  }

  if (problems.length === 0) {
    // only walk a structurally sound graph
    const reachable = reach([START], (n) => successors(wf, n));
    for (const n of wf.nodes.keys()) if (!reachable.has(n)) problems.push(`node "${n}" is unreachable from START`);
    const preds = new Map<string, string[]>();
    for (const n of [START, ...wf.nodes.keys()]) {
      for (const s of successors(wf, n)) preds.set(s, [...(preds.get(s) ?? []), n]);
    }
    const canEnd = reach([END], (n) => preds.get(n) ?? []);
    for (const n of wf.nodes.keys()) {
      if (reachable.has(n) && !canEnd.has(n)) problems.push(`node "${n}" can never reach END (a loop without an exit or a turn limit?)`);
    }
  }

  if (problems.length > 0) {
    throw new MasoError(
      "GRAPH_INVALID",
      `workflow "${wf.name}" is invalid:\n  - ${problems.join("\n  - ")}`,
      "fix the listed nodes and edges before compile()",
    );
  }
}
