// A hand-made coding task whose pass rate a scripted `code` output sets exactly (0.25, 0.5 or 1), and
// a script runner for iterative coding. Test fixtures only: the outputs are written, not sampled.
import type { Task } from "../../examples/workflows/iterative-coding/workflow.js";
import { initialState, workflow } from "../../examples/workflows/iterative-coding/workflow.js";
import { codeTarget } from "../../examples/workflows/common/prompts.js";
import { type RoleCallRequest, runEpisodes, scriptedCaller, type Trajectory } from "../../src/workflow/index.js";
import type { CodingState } from "../../examples/workflows/iterative-coding/state.js";

/** add(a, b) with four tests. */
export const addTask: Task = {
  id: "add",
  key: "add",
  entry: "add",
  problem: "Write a JavaScript function `add(a, b)` that returns the sum of the numbers a and b.",
  reference: "function add(a, b) { return a + b; }",
  tests: [
    { call: "add(1, 2)", expected: 3 },
    { call: "add(2, 2)", expected: 4 },
    { call: "add(0, 0)", expected: 0 },
    { call: "add(5, -1)", expected: 4 },
  ],
};

/** `code` outputs with a known pass rate on addTask. */
export const CODE_BY_PASS_RATE = {
  0.25: codeTarget("function add(a, b) { return 0; }"), // only add(0, 0)
  0.5: codeTarget("function add(a, b) { return a * 2; }"), // add(2, 2) and add(0, 0)
  1: codeTarget("function add(a, b) { return a + b; }"),
} as const;

/** Scripted plan / code / reflect outputs; `code` picks the output for each turn (1-based). */
export function codingScript(codeAtTurn: (turn: number) => string) {
  return (req: RoleCallRequest): string => {
    if (req.role === "plan") return `plan ${req.turn}: return the sum`;
    if (req.role === "code") return codeAtTurn(req.turn);
    return `reflection ${req.turn}: use a + b`;
  };
}

/** Runs one episode of the workflow on `task` with a scripted caller. */
export async function walkCoding(script: (req: RoleCallRequest) => string, task: Task = addTask) {
  const caller = scriptedCaller(script);
  const [trajectory] = await runEpisodes(workflow, [{ id: "ep-0", state: initialState(task), taskId: task.id }], { caller });
  return { trajectory: trajectory as Trajectory<CodingState>, calls: caller.calls };
}

/** "node@turn" per record, in order. */
export const visited = (t: Trajectory<unknown>): string[] => t.records.map((r) => `${r.node}@${r.turn}`);
