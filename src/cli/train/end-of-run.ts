// What `maso train` prints when a run ends, from the summary.json it wrote: which cast is best on
// dev (saying so plainly when no checkpoint beat the untrained one), and the paired comparisons of
// the kept evaluations, in `maso compare`'s words. Prints only; computes nothing.
import { comparisonReport } from "../../run/compare-episodes.js";
import type { TrainSummary } from "../../run/rl-run.js";
import { type CliIo, println } from "../commands/types.js";

const indent = (text: string) => text.replace(/^/gm, "  ");

/**
 * Prints the best-on-dev line, `summary.devComparison` and the test before/after of `--eval-test`.
 * @example printEndOfRun(io, result.summary);
 */
export function printEndOfRun(io: CliIo, s: TrainSummary): void {
  const { best } = s;
  if (best?.step === 0)
    println(
      io,
      `best on dev: the untrained cast (step 0, metric ${best.metric.toFixed(4)}); no checkpoint beat it, so 'best' (maso eval, serve) is the untrained cast`,
    );
  else if (best) println(io, `best on dev: step ${best.step} (metric ${best.metric.toFixed(4)})`);
  if (s.devComparison) {
    println(io, `dev, untrained cast (step 0) -> step ${s.devComparison.steps[1]}:`);
    println(io, indent(comparisonReport(s.devComparison)));
  }
  if (s.testBefore && s.testAfter && s.testComparison) {
    const cast = s.testAfter.step === 0 ? "the untrained cast" : `step ${s.testAfter.step}`;
    println(io, `test, untrained cast (step 0) -> the cast that ships (${cast}${best ? ", best on dev" : ""}):`);
    println(io, indent(comparisonReport(s.testComparison)));
  }
}
