// Markdown tables of results summaries (one table per workflow, a row per config variant) with
// links to each variant's curves, for docs/notes/results-tables.md. Pure: summaries in, text out.
import { type MeanStd, meanRecords, type ResultsSummary } from "./results-summary.js";

// one seed has no spread: print the value alone rather than a misleading "± 0"
const pm = (m: MeanStd, digits = 3) =>
  !Number.isFinite(m.mean) ? "—" : m.n < 2 ? m.mean.toFixed(digits) : `${m.mean.toFixed(digits)} ± ${m.std.toFixed(digits)}`;

/** Episode metrics worth a column: the workflow's own ones (engine bookkeeping left out). */
const BOOKKEEPING = new Set(["steps", "roleCalls", "toolErrors", "toolTimeouts", "turnLimitHits", "promptTokens", "outputTokens"]);

function extras(m: Record<string, number>): string {
  const keys = Object.keys(m).filter((k) => !BOOKKEEPING.has(k));
  return keys.map((k) => `${k} ${Number(m[k].toPrecision(3))}`).join(", ") || "—";
}

/**
 * One markdown section per workflow. `link(summary, file)` gives the path to use for a figure.
 * @example
 * const md = resultsMarkdown(summaries, (s, f) => `results/${s.workflow}/${s.variant}/${f}`);
 */
export function resultsMarkdown(summaries: readonly ResultsSummary[], link: (s: ResultsSummary, file: string) => string): string {
  const byWorkflow = new Map<string, ResultsSummary[]>();
  for (const s of summaries) byWorkflow.set(s.workflow, [...(byWorkflow.get(s.workflow) ?? []), s]);
  const out: string[] = [];
  for (const [wf, rows] of [...byWorkflow].sort(([a], [b]) => a.localeCompare(b))) {
    rows.sort((a, b) => a.variant.localeCompare(b.variant));
    out.push(`### ${wf}`, "");
    out.push(
      "| variant | test before RL | test after RL | Δ | steps | train wall s | cores | seeds | selected step | episode metrics (test, before) | episode metrics (test, after) |",
    );
    out.push("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const s of rows) {
      const resumed = s.perSeed.some((p) => p.resumed) ? " †" : "";
      const picked = s.perSeed.map((p) => (p.selection === "best" ? p.step : `${p.step} (latest)`)).join(", ");
      out.push(
        `| ${s.variant} | ${pm(s.before)} | ${pm(s.after)} | ${pm(s.delta)} | ${s.steps} | ${pm(s.trainSeconds, 1)}${resumed} | ${s.machine.cores} | ${s.seeds.join(", ")} | ${picked} | ${extras(s.episodeMetrics.testBefore ?? meanRecords(s.perSeed.map((p) => p.episodeMetrics.testBefore)))} | ${extras(s.episodeMetrics.testAfter)} |`,
      );
    }
    out.push("");
    out.push(
      `Test metric: greedy, whole test split (${rows.map((s) => s.perSeed[0]?.testEpisodes ?? 0).join("/")} episodes); mean ± sample std over seeds; after RL = best-on-dev checkpoint.`,
    );
    if (rows.some((s) => s.perSeed.some((p) => p.resumed)))
      out.push("† resumed after an interruption: the wall time covers the last attempt only.");
    out.push("");
    for (const s of rows) for (const f of s.plots) out.push(`![${wf} ${s.variant} ${f.replace(/\.svg$/, "")}](${link(s, f)})`);
    out.push("");
  }
  return out.join("\n");
}
