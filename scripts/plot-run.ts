// Training curves of maso runs as self-contained SVG files: per-role reward.total vs step (EMA, raw
// faint) and the dev eval.metric curve. One run, several overlaid (--overlay), or several as a
// mean with a min–max band (--band, e.g. seeds). Reads metrics.jsonl only.
//   npx tsx scripts/plot-run.ts <runDir>... [--out <dir>] [--overlay | --band] [--labels a,b] [--ema 0.6] [--title t]
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { type PlotMode, plotFigures } from "./lib/plots.js";
import { readRunRows } from "./lib/run-series.js";
import { parseScriptArgs, runIfMain, usage } from "./lib/script-main.js";

const HELP = "usage: npx tsx scripts/plot-run.ts <runDir>... [--out <dir>] [--overlay | --band] [--labels a,b,...] [--ema w] [--title t]";
const OPTIONS = {
  out: { type: "string" },
  overlay: { type: "boolean" },
  band: { type: "boolean" },
  labels: { type: "string" },
  ema: { type: "string" },
  title: { type: "string" },
} as const;

/**
 * Writes rewards.svg (and eval.svg when the runs logged eval.metric) into --out (default: the run
 * directory for one run, else ./plots); returns the exit code.
 */
export async function main(argv: string[], log: (s: string) => void = console.log): Promise<number> {
  const a = parseScriptArgs(argv, OPTIONS, HELP);
  const dirs = a.positionals;
  if (dirs.length === 0) throw usage("give at least one run directory", HELP);
  if (a.values.overlay && a.values.band) throw usage("--overlay and --band exclude each other", HELP);
  const mode: PlotMode = a.values.band ? "band" : a.values.overlay || dirs.length > 1 ? "overlay" : "single";
  const labels = a.values.labels?.split(",") ?? dirs.map((d) => basename(resolve(d)));
  if (labels.length !== dirs.length) throw usage(`${labels.length} labels for ${dirs.length} runs`, HELP);
  const weight = a.values.ema === undefined ? 0.6 : Number(a.values.ema);
  if (!(weight >= 0 && weight < 1)) throw usage(`--ema must be in [0, 1), got '${a.values.ema}'`, HELP);
  const runs = dirs.map((d, i) => ({ label: labels[i], rows: readRunRows(d) }));
  const out = a.values.out ?? (dirs.length === 1 ? dirs[0] : "plots");
  mkdirSync(out, { recursive: true });
  for (const f of plotFigures(runs, { mode, ema: weight, title: a.values.title })) {
    writeFileSync(join(out, f.file), f.svg);
    log(join(out, f.file));
  }
  return 0;
}

runIfMain(import.meta.url, "plot-run", main);
