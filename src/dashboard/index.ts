// The dashboard's public surface, listed explicitly for src/index.ts to re-export.
export { createDashboardApp } from "./app.js";
export { serveDashboard, type DashboardServer } from "./serve.js";
export { episodeSummaries, metricsAfter, readEpisode, readRunInfo, trajectorySteps } from "./run-reader.js";
