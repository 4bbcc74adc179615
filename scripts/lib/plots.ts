// The training-curve figures of one or more runs as SVG strings: per-role reward.total (EMA, raw
// line faint) and the dev eval metric. Modes: one run; several runs overlaid (a line per run, e.g.
// cast shapes); several runs as mean with a min–max band (e.g. seeds). Pure; callers write files.
import type { MetricsRow } from "../../src/progress/metrics-writer.js";
import { aggregate, ema, evalCurve, roleNames, roleRewards } from "./run-series.js";
import { lineChart, type Series } from "./svg-chart.js";

export type PlotMode = "single" | "overlay" | "band";

export interface PlotRun {
  label: string;
  rows: readonly MetricsRow[];
}

export interface PlotOptions {
  mode: PlotMode;
  /** EMA weight on the past for reward curves (default 0.6) */
  ema?: number;
  /** title prefix, e.g. the workflow name */
  title?: string;
}

/** One figure: a file name (rewards.svg, eval.svg) and its SVG text. */
export interface Figure {
  file: string;
  svg: string;
}

function rewardSeries(runs: readonly PlotRun[], o: PlotOptions): Series[] {
  const w = o.ema ?? 0.6;
  const roles = [...new Set(runs.flatMap((r) => roleNames(r.rows)))];
  if (o.mode === "band")
    return roles.map((role) => {
      const { mean, band } = aggregate(runs.map((r) => ema(roleRewards(r.rows, role), w)));
      return { name: `${role} (mean of ${runs.length})`, points: mean, band };
    });
  return runs.flatMap((r) =>
    roleNames(r.rows).map((role) => {
      const raw = roleRewards(r.rows, role);
      return { name: o.mode === "overlay" ? `${r.label} · ${role}` : role, points: ema(raw, w), raw };
    }),
  );
}

function evalSeries(runs: readonly PlotRun[], o: PlotOptions): Series[] {
  if (o.mode === "band") {
    const curves = runs.map((r) => evalCurve(r.rows)).filter((c) => c.length > 0);
    if (curves.length === 0) return [];
    const { mean, band } = aggregate(curves);
    return [{ name: `dev metric (mean of ${curves.length})`, points: mean, band }];
  }
  return runs
    .map((r) => ({ name: o.mode === "overlay" ? r.label : "dev metric", points: evalCurve(r.rows) }))
    .filter((s) => s.points.length > 0);
}

/**
 * The figures for `runs`: rewards.svg always, eval.svg when some run logged eval.metric.
 * @example
 * const figs = plotFigures([{ label: "seed 0", rows: readRunRows("runs/a") }], { mode: "single" });
 */
export function plotFigures(runs: readonly PlotRun[], o: PlotOptions): Figure[] {
  const pre = o.title ? `${o.title}: ` : "";
  const how = o.mode === "band" ? ` (mean, min–max over ${runs.length} runs)` : "";
  const smooth = `EMA ${o.ema ?? 0.6}${o.mode === "band" ? "" : ", raw faint"}`;
  const figs: Figure[] = [
    {
      file: "rewards.svg",
      svg: lineChart({
        title: `${pre}reward per role${how}`,
        xLabel: `RL step (${smooth})`,
        yLabel: "reward.total",
        series: rewardSeries(runs, o),
      }),
    },
  ];
  const ev = evalSeries(runs, o);
  if (ev.length)
    figs.push({
      file: "eval.svg",
      svg: lineChart({ title: `${pre}dev metric${how}`, xLabel: "RL step", yLabel: "eval.metric (dev, greedy)", series: ev }),
    });
  return figs;
}
