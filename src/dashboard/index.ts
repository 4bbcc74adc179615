// The dashboard's public surface, listed explicitly for src/index.ts to re-export.
export { createDashboardApp, type DashboardAppOptions } from "./app.js";
export { serveDashboard, type DashboardServer } from "./serve.js";
export { episodeSummaries, metricsAfter, readEpisode, readRunInfo, trajectorySteps } from "./run-reader.js";
export { metricsTail, type MetricsTail } from "./metrics-tail.js";
