// A hand-made math task and a script runner for both MARFT math variants. Test fixtures only: the
// reasoner and actor outputs are written, not sampled.
import * as dual from "../../examples/workflows/marft-math/workflow.js";
import * as single from "../../examples/workflows/marft-math/single-agent.js";
import type { MathState } from "../../examples/workflows/marft-math/state.js";
import { type RoleCallRequest, runEpisodes, scriptedCaller, type Trajectory } from "../../src/workflow/index.js";

export const boxTask: dual.Task = {
  id: "boxes",
  problem: "Ana buys 3 boxes with 4 pens in each box. How many pens does Ana buy?",
  answer: "12",
  ops: 1,
  names: ["Ana"],
  steps: [{ a: 3, op: "*", b: 4, result: 12 }],
};

/** Scripted outputs: the actor answers `answers[round − 1]` (1-based rounds = turns). */
export function mathScript(answers: readonly string[]) {
  return (req: RoleCallRequest): string =>
    req.role === "reasoner"
      ? `Round ${req.turn}: multiply boxes by pens per box.`
      : `3 * 4 = ${answers[req.turn - 1]}, so \\boxed{${answers[req.turn - 1]}}`;
}

/** Runs one episode of the dual-agent (default) or single-agent workflow with a scripted caller. */
export async function walkMath(script: (req: RoleCallRequest) => string, variant: "dual" | "single" = "dual") {
  const mod = variant === "dual" ? dual : single;
  const caller = scriptedCaller(script);
  const [trajectory] = await runEpisodes(mod.workflow, [{ id: "ep-0", state: mod.initialState(boxTask), taskId: boxTask.id }], { caller });
  return { trajectory: trajectory as Trajectory<MathState>, calls: caller.calls };
}

export const visited = (t: Trajectory<unknown>): string[] => t.records.map((r) => `${r.node}@${r.turn}`);
