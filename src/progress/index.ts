// Progress and metrics' public surface, listed explicitly for src/index.ts to re-export.
export { createProgress, type Progress, type ProgressOptions, type ProgressStream } from "./progress-display.js";
export { formatDuration, formatRate, formatStepLine, type PipelineProgress, type ProgressStats, type ProgressUpdate } from "./format.js";
export { appendRewards, readExcluded, readRewards, rewardFile } from "./reward-writer.js";
export type { ExcludedEpisode } from "./reward-writer.js";
export { roleRow, roleRows } from "./role-rows.js";
export {
  METRICS_FILE,
  SUMMARY_FILE,
  openMetricsWriter,
  readMetrics,
  type MetricValues,
  type MetricsRow,
  type MetricsWriter,
} from "./metrics-writer.js";
export { metricLeaves, type MetricLeaf } from "./metric-leaves.js";
export { metricColumn, metricsCsv } from "./metrics-csv.js";
export { type EventFileWriter, eventFiles, metricTag, openEventFile, scalarEvent, TENSORBOARD_DIR } from "./tensorboard-writer.js";
export {
  type ChatExample,
  type RoleCall,
  type RoleCallFilter,
  type RoleCallSource,
  roleCalls,
  trajectorySteps,
} from "./trajectory-export.js";
