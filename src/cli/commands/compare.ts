// `maso compare`: a paired comparison of two `maso eval --episodes` files on the same tasks — the
// mean difference with its bootstrap and t 95 % intervals, and wins, losses and ties. Tasks pair by
// their key and must be the same task on both sides (same hash); tasks only one side ran are named
// and left out, unless none are shared.
import { MasoError } from "../../errors.js";
import { compareEpisodes, comparisonReport } from "../../run/compare-episodes.js";
import { readEvalEpisodes } from "../../run/eval-episodes.js";
import { num, parseFlags } from "../args.js";
import { usageError } from "../exit-codes.js";
import { type Command, println } from "./types.js";

export const compareCommand: Command = {
  name: "compare",
  summary: "paired comparison of two evaluations (maso eval --episodes) on the same tasks",
  help: `usage: maso compare <before.jsonl> <after.jsonl> [--json] [--resamples <n>] [--seed <n>]

Pairs the episodes of two \`maso eval --episodes\` files by task and prints the mean difference
(after - before) with a 95% interval (percentile bootstrap over tasks, seeded, and the paired t
interval), and wins, losses and ties. Tasks pair by their id (or index) and must hash equal.

options:
  --resamples <n>   bootstrap resamples (default 10000)
  --seed <n>        seed of the resampling (default 0)
  --json            print the comparison as JSON`,
  async run(argv, io) {
    const p = parseFlags("compare", argv, { json: { type: "boolean" }, resamples: { type: "string" }, seed: { type: "string" } }, 2);
    const [fileA, fileB] = p.positionals;
    if (!fileA || !fileB) throw usageError("compare: give two files written by `maso eval --episodes`", "compare");
    const [a, b] = [await readEvalEpisodes(fileA), await readEvalEpisodes(fileB)];
    if (a.header.split !== b.header.split)
      throw new MasoError(
        "EVAL_COMPARE_TASKS_DIFFER",
        `the files evaluate different splits (${a.header.split} vs ${b.header.split})`,
        "evaluate both on the same split",
      );
    const c = compareEpisodes(a.episodes, b.episodes, {
      resamples: num(p, "resamples", "compare", { int: true, min: 100, max: 10_000_000 }),
      seed: num(p, "seed", "compare", { int: true, min: 0 }),
    });
    const sources = { before: { ...a.header }, after: { ...b.header } };
    println(io, p.values.json ? JSON.stringify({ ...c, ...sources }) : comparisonReport(c));
    return 0;
  },
};
