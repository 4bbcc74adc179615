// `maso compare`: a paired comparison of two `maso eval --episodes` files on the same tasks — the
// mean difference with its bootstrap and t 95 % intervals, and wins, losses and ties. Tasks pair by
// their key and must be the same task on both sides (same hash); tasks only one side ran are named
// and left out, unless none are shared.
import { MasoError } from "../../errors.js";
import { type EvalEpisode, readEvalEpisodes } from "../../run/eval-episodes.js";
import { type PairedComparison, pairedComparison } from "../../run/paired.js";
import { num, parseFlags } from "../args.js";
import { usageError } from "../exit-codes.js";
import { type Command, println } from "./types.js";

/** Each side's metrics in one task order, and how many tasks only one side has. */
function pairUp(before: readonly EvalEpisode[], after: readonly EvalEpisode[]) {
  const keyed = (eps: readonly EvalEpisode[], file: string) => {
    const m = new Map<string, EvalEpisode>();
    for (const e of eps) {
      const k = JSON.stringify(e.task);
      if (m.has(k)) throw new MasoError("EVAL_COMPARE_DUPLICATE", `${file} has task ${k} twice`, "evaluate each task once");
      m.set(k, e);
    }
    return m;
  };
  const a = keyed(before, "the first file");
  const b = keyed(after, "the second file");
  const pairs: [number, number][] = [];
  for (const [k, e] of a) {
    const f = b.get(k);
    if (!f) continue;
    if (f.taskHash !== e.taskHash)
      throw new MasoError(
        "EVAL_COMPARE_TASKS_DIFFER",
        `task ${k} is a different task in the two files (hash ${e.taskHash} vs ${f.taskHash})`,
        "compare evaluations of the same split of the same workflow",
      );
    pairs.push([e.metric, f.metric]);
  }
  return { pairs, onlyBefore: a.size - pairs.length, onlyAfter: b.size - pairs.length };
}

const fmt = (x: number) => (x >= 0 ? "+" : "") + x.toFixed(4);

function report(c: PairedComparison, onlyBefore: number, onlyAfter: number): string {
  const lines = [
    `paired over ${c.n} tasks: ${c.meanBefore.toFixed(4)} -> ${c.meanAfter.toFixed(4)}, difference ${fmt(c.meanDiff)}`,
    `95% interval ${fmt(c.bootstrap95[0])} .. ${fmt(c.bootstrap95[1])} (bootstrap, ${c.resamples} resamples, seed ${c.seed})` +
      (c.t95 ? `; ${fmt(c.t95[0])} .. ${fmt(c.t95[1])} (paired t)` : ""),
    `wins ${c.wins}, losses ${c.losses}, ties ${c.ties}`,
  ];
  const excludes = c.bootstrap95[0] > 0 || c.bootstrap95[1] < 0;
  lines.push(excludes ? `the interval excludes 0: a ${c.meanDiff > 0 ? "gain" : "loss"}` : "the interval includes 0: no clear difference");
  if (onlyBefore + onlyAfter > 0) lines.push(`left out: ${onlyBefore} tasks only in the first file, ${onlyAfter} only in the second`);
  return lines.join("\n");
}

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
    const { pairs, onlyBefore, onlyAfter } = pairUp(a.episodes, b.episodes);
    if (pairs.length === 0)
      throw new MasoError("EVAL_COMPARE_EMPTY", "the two files share no task", "evaluate both on the same split of the same workflow");
    const c = pairedComparison(
      pairs.map((x) => x[0]),
      pairs.map((x) => x[1]),
      {
        resamples: num(p, "resamples", "compare", { int: true, min: 100, max: 10_000_000 }),
        seed: num(p, "seed", "compare", { int: true, min: 0 }),
      },
    );
    const sources = { before: { ...a.header }, after: { ...b.header } };
    println(io, p.values.json ? JSON.stringify({ ...c, onlyBefore, onlyAfter, ...sources }) : report(c, onlyBefore, onlyAfter));
    return 0;
  },
};
