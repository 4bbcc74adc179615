// The paired comparison of two evaluations' episodes (`maso compare`, and the end of `maso train`):
// tasks pair by their key and must be the same task on both sides (same hash); tasks only one side
// ran are counted and left out. The statistics are paired.ts's; this file only pairs and reports.
import { MasoError } from "../errors.js";
import type { EvalEpisode } from "./eval-episodes.js";
import { type PairedComparison, type PairedOptions, pairedComparison } from "./paired.js";

/** A comparison and how many tasks only one side had. */
export type EpisodeComparison = PairedComparison & { onlyBefore: number; onlyAfter: number };

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

/**
 * Pairs two evaluations' episodes by task and compares after with before. Throws EVAL_COMPARE_EMPTY
 * when they share no task, EVAL_COMPARE_TASKS_DIFFER / EVAL_COMPARE_DUPLICATE for mismatched files.
 * @example const c = compareEpisodes((await readEvalEpisodes(a)).episodes, (await readEvalEpisodes(b)).episodes);
 */
export function compareEpisodes(before: readonly EvalEpisode[], after: readonly EvalEpisode[], o: PairedOptions = {}): EpisodeComparison {
  const { pairs, onlyBefore, onlyAfter } = pairUp(before, after);
  if (pairs.length === 0)
    throw new MasoError("EVAL_COMPARE_EMPTY", "the two files share no task", "evaluate both on the same split of the same workflow");
  const c = pairedComparison(
    pairs.map((x) => x[0]),
    pairs.map((x) => x[1]),
    o,
  );
  return { ...c, onlyBefore, onlyAfter };
}

const fmt = (x: number) => (x >= 0 ? "+" : "") + x.toFixed(4);

/** The comparison as `maso compare` prints it: means, difference, intervals, wins/losses/ties and a verdict. */
export function comparisonReport(c: EpisodeComparison): string {
  const lines = [
    `paired over ${c.n} tasks: ${c.meanBefore.toFixed(4)} -> ${c.meanAfter.toFixed(4)}, difference ${fmt(c.meanDiff)}`,
    `95% interval ${fmt(c.bootstrap95[0])} .. ${fmt(c.bootstrap95[1])} (bootstrap, ${c.resamples} resamples, seed ${c.seed})` +
      (c.t95 ? `; ${fmt(c.t95[0])} .. ${fmt(c.t95[1])} (paired t)` : ""),
    `wins ${c.wins}, losses ${c.losses}, ties ${c.ties}`,
  ];
  const excludes = c.bootstrap95[0] > 0 || c.bootstrap95[1] < 0;
  lines.push(excludes ? `the interval excludes 0: a ${c.meanDiff > 0 ? "gain" : "loss"}` : "the interval includes 0: no clear difference");
  if (c.onlyBefore + c.onlyAfter > 0)
    lines.push(`left out: ${c.onlyBefore} tasks only in the first file, ${c.onlyAfter} only in the second`);
  return lines.join("\n");
}
