// Where MARFT math's dual-agent cast fails: the plan or the arithmetic. Greedy episodes of the
// untrained cast on the first N tasks of a split and, per operation count and overall, one JSON
// line: the episode's correctness, the share of first-round plans whose exact value
// (plan-arithmetic.ts) is the answer, how often the actor answers right after such a plan, and the
// share of the actor's `a op b = c` equations that are exact.
//   npx tsx scripts/math-arithmetic.ts [--variant v] [--tasks 300] [--split test]
import { isEquivalentAnswer } from "../src/envs/index.js";
import type { Trajectory } from "../src/workflow/index.js";
import type { ActorOutput, MathState } from "../examples/workflows/marft-math/state.js";
import { equationsIn, planAnswer } from "../examples/workflows/marft-math/plan-arithmetic.js";
import { parseScriptArgs, positiveIntArg, runIfMain, usage } from "./lib/script-main.js";
import { greedyOnSplit, splitArg, untrainedCast } from "./lib/untrained-cast.js";

const FILE = "examples/workflows/marft-math/workflow.ts";
const HELP = "usage: npx tsx scripts/math-arithmetic.ts [--variant <configs key>] [--tasks <n>] [--split train|dev|test]";
const OPTIONS = { variant: { type: "string" }, tasks: { type: "string" }, split: { type: "string" } } as const;

export interface ArithmeticRow {
  ops: number | "all";
  episodes: number;
  correct: number;
  /** first-round plans whose exact value is the reference answer */
  planRight: number;
  /** of those, the share whose first-round actor answer was right */
  actorRightGivenPlan: number;
  /** the actor's number-only equations, and the share that are exact */
  equations: number;
  equationsExact: number;
}

/** One row over the greedy episodes of one operation count (or of all). */
export function arithmeticRow(ops: ArithmeticRow["ops"], episodes: readonly Trajectory<MathState>[]): ArithmeticRow {
  let planRight = 0;
  let actorRight = 0;
  let total = 0;
  let exact = 0;
  for (const t of episodes) {
    const ref = t.finalState.reference;
    const plan = t.records.find((r) => r.role === "reasoner");
    const actor = t.records.find((r) => r.role === "actor");
    const value = typeof plan?.output === "string" ? planAnswer(plan.output) : null;
    const answer = (actor?.output as ActorOutput | undefined)?.answer ?? null;
    if (value !== null && isEquivalentAnswer(value, ref)) {
      planRight++;
      if (answer !== null && isEquivalentAnswer(answer, ref)) actorRight++;
    }
    for (const r of t.records) {
      if (r.role !== "actor") continue;
      const e = equationsIn(String(r.rawOutput ?? ""));
      total += e.total;
      exact += e.exact;
    }
  }
  const n = episodes.length;
  return {
    ops,
    episodes: n,
    correct: episodes.filter((t) => t.finalState.correct).length / n,
    planRight: planRight / n,
    actorRightGivenPlan: planRight === 0 ? 0 : actorRight / planRight,
    equations: total,
    equationsExact: total === 0 ? 0 : exact / total,
  };
}

export async function main(argv: string[], write: (line: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const a = parseScriptArgs(argv, OPTIONS, HELP);
  if (a.positionals.length > 0) throw usage("takes no positional arguments", HELP);
  const n = positiveIntArg(a.values.tasks, 300, "tasks", HELP);
  const split = splitArg(a.values.split ?? "test", "--split", HELP);
  const { tasks, trajectories } = await greedyOnSplit(await untrainedCast(FILE, a.values.variant), FILE, split, n, "arith");
  const opsOf = (tasks as { ops: number }[]).map((t) => t.ops);
  const episodes = trajectories as Trajectory<MathState>[];
  for (const ops of [...new Set(opsOf)].sort())
    write(
      `${JSON.stringify(
        arithmeticRow(
          ops,
          episodes.filter((_, i) => opsOf[i] === ops),
        ),
      )}\n`,
    );
  write(`${JSON.stringify(arithmeticRow("all", episodes))}\n`);
  return 0;
}

runIfMain(import.meta.url, "math-arithmetic", main);
