// The JSON the dashboard's API answers (app.ts), as the browser modules read it. Types only: the
// server's own types where they are plain data, so that a change there fails the browser typecheck.
import type { MetricsRow } from "../../progress/metrics-row.js";
import type { CombinedReward, SkippedRecord } from "../../rewards/combine.js";
import type { EpisodeStatus, Trajectory } from "../../workflow/trajectory.js";
import type { ConfigDifferences } from "../config-diff.js";
import type { RunOverview } from "../run-summary.js";
import type UPlot from "uplot";

export type { ConfigDifferences, MetricsRow };
export type { JudgeRecord, StepRecord, ToolCallRecord } from "../../workflow/trajectory.js";

/** /api/runs */
export interface RunsAnswer {
  runs: { index: number; runDir: string; label: string }[];
}

/** /api/run */
export interface RunInfo {
  runDir: string;
  config: unknown;
  summary: unknown;
  checkpoints: number[];
  overview: RunOverview;
}

/** /api/metrics: the rows after `after`, and how many the file holds */
export interface MetricsAnswer {
  rows: MetricsRow[];
  total: number;
}

/** /api/steps */
export interface StepsAnswer {
  steps: number[];
}

/** One line of /api/steps/:step/episodes */
export interface EpisodeSummary {
  episodeId: string;
  taskId: string | null;
  status: EpisodeStatus;
  records: number;
  reward: number | null;
}

/** /api/steps/:step/episodes/:id */
export interface EpisodeAnswer {
  trajectory: Trajectory;
  rewards: CombinedReward[];
  skipped: SkippedRecord[];
}

/** An overlaid run as the page holds it: its metric rows so far and its latest run info. */
export interface Run {
  index: number;
  label: string;
  runDir: string;
  rows: MetricsRow[];
  info: RunInfo | null;
}

/** A uPlot chart, and the parts of uPlot's options that plot.js builds. */
export type { UPlot };
export type PlotData = UPlot.AlignedData;
export type PlotOptions = UPlot.Options;
export type PlotSeries = UPlot.Series;
export type AxisSize = UPlot.Axis.Size;
export type ScaleRange = UPlot.Range.Function;

/** uPlot's class, which the page loads as a classic script before the modules (/vendor/uPlot.iife.min.js). */
export type UPlotClass = typeof UPlot;
