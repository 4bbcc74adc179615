// Does the untrained cast behave the same on the training split as on the held-out ones? Greedy
// episodes on the first N tasks of each split and, per split, one JSON line: the held-out metric,
// every role's format-failure share, and for evidence roles (--evidence) how their outputs split
// (verbatim passage copies, "no useful information", other) and how many name a gold answer. A
// training split the base model has memorised shows up as roles that copy and format far better there.
//   npx tsx scripts/split-probe.ts <workflow file> [--variant v] [--tasks 100] [--splits train,test] [--evidence summarize]
import { mean } from "../src/rl/advantages/batch.js";
import { isFormatFailure, type Trajectory } from "../src/workflow/index.js";
import { countShares, goldOf, type SharesRow } from "./evidence-shares.js";
import { parseScriptArgs, positiveIntArg, runIfMain, usage } from "./lib/script-main.js";
import { greedyOnSplit, splitArg, untrainedCast } from "./lib/untrained-cast.js";

const HELP =
  "usage: npx tsx scripts/split-probe.ts <workflow file> [--variant <configs key>] [--tasks <n>] [--splits train,test] [--evidence summarize]";
const OPTIONS = {
  variant: { type: "string" },
  tasks: { type: "string" },
  splits: { type: "string" },
  evidence: { type: "string" },
} as const;

export interface SplitProbeRow {
  split: string;
  episodes: number;
  metric: number;
  /** per role: calls and the share that were format failures */
  roles: Record<string, { calls: number; formatFailures: number }>;
  /** per evidence role: countShares over the split's episodes */
  evidence: Record<string, Omit<SharesRow, "steps">>;
}

/** The per-role figures of one split's greedy episodes (`scores[i]` is episode i's metric). */
export function probeRow(
  split: string,
  trajectories: readonly Trajectory<unknown>[],
  scores: readonly number[],
  evidence: readonly string[],
): SplitProbeRow {
  const roles: SplitProbeRow["roles"] = {};
  for (const t of trajectories)
    for (const r of t.records) {
      if (r.kind !== "role" || r.role === null) continue;
      const s = (roles[r.role] ??= { calls: 0, formatFailures: 0 });
      s.calls++;
      if (isFormatFailure(r)) s.formatFailures++;
    }
  for (const s of Object.values(roles)) s.formatFailures /= s.calls;
  const episodes = trajectories.map((t) => ({ records: t.records, gold: goldOf(t.records) }));
  return {
    split,
    episodes: trajectories.length,
    metric: mean([...scores]),
    roles,
    evidence: Object.fromEntries(evidence.map((role) => [role, countShares(episodes, role)])),
  };
}

export async function main(argv: string[], write: (line: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const a = parseScriptArgs(argv, OPTIONS, HELP);
  const file = a.positionals[0];
  if (!file || a.positionals.length > 1) throw usage("give exactly one workflow file", HELP);
  const n = positiveIntArg(a.values.tasks, 100, "tasks", HELP);
  const splits = (a.values.splits ?? "train,test").split(",").map((s) => splitArg(s, "--splits", HELP));
  const evidence = a.values.evidence ? a.values.evidence.split(",") : [];
  const cast = await untrainedCast(file, a.values.variant);
  for (const split of splits) {
    const { trajectories, scores } = await greedyOnSplit(cast, file, split, n, "probe");
    write(`${JSON.stringify(probeRow(split, trajectories, scores, evidence))}\n`);
  }
  return 0;
}

runIfMain(import.meta.url, "split-probe", main);
