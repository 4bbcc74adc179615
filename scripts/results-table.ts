// Renders every summary.json under a results directory (scripts/results.ts output) as markdown
// tables, one per workflow, with links to the curves; prints it or writes it to --out (e.g.
// docs/notes/results-tables.md, links then relative to that file). Reads summaries only.
//   npx tsx scripts/results-table.ts <resultsDir> [--out docs/notes/results-tables.md]
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { MasoError } from "../src/errors.js";
import { resultsMarkdown } from "./lib/results-markdown.js";
import type { ResultsSummary } from "./lib/results-summary.js";
import { parseScriptArgs, runIfMain, usage } from "./lib/script-main.js";

const HELP = "usage: npx tsx scripts/results-table.ts <resultsDir> [--out <file.md>]";

/** summary.json files under `dir` with the directory each lies in. */
export function findSummaries(dir: string): { dir: string; summary: ResultsSummary }[] {
  const out: { dir: string; summary: ResultsSummary }[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...findSummaries(p));
    else if (e.name === "summary.json") {
      const s = JSON.parse(readFileSync(p, "utf8")) as ResultsSummary;
      if (s.split === "test" && Array.isArray(s.perSeed)) out.push({ dir, summary: s }); // training runs' summary.json are not ours
    }
  }
  return out;
}

export async function main(argv: string[], print: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const a = parseScriptArgs(argv, { out: { type: "string" } }, HELP);
  const root = a.positionals[0];
  if (!root || a.positionals.length > 1) throw usage("give one results directory", HELP);
  if (!existsSync(root)) throw new MasoError("RESULTS_NOT_FOUND", `${root} does not exist`, "run scripts/results.ts first");
  const found = findSummaries(root);
  if (found.length === 0) throw new MasoError("RESULTS_NOT_FOUND", `no results summary.json under ${root}`, "run scripts/results.ts first");
  const base = a.values.out ? dirname(a.values.out) : root;
  const dirOf = new Map(found.map((f) => [f.summary, f.dir]));
  const md = resultsMarkdown(
    found.map((f) => f.summary),
    (s, file) =>
      relative(base, join(dirOf.get(s)!, file))
        .split("\\")
        .join("/"),
  );
  if (a.values.out) writeFileSync(a.values.out, md);
  else print(md);
  return 0;
}

runIfMain(import.meta.url, "results-table", main);
