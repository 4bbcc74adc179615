// The dashboard page's entry module: lists the runs, starts the charts and the viewer, and refreshes
// the run info (summary, header, config differences) every few seconds.
import { initCharts, poll, renderCharts } from "./charts.js";
import { $, getJson, S } from "./common.js";
import { renderConfigDiff, renderSummary } from "./summary.js";
import { initViewer } from "./viewer.js";

/** @typedef {import("./api.js").RunInfo} RunInfo */

function loadInfo() {
  return Promise.all(
    S.runs.map((run) =>
      getJson("/api/run?run=" + run.index).then((/** @type {RunInfo} */ info) => {
        run.info = info;
      }),
    ),
  )
    .then(() => {
      const info = S.runs.length === 1 ? S.runs[0].info : null;
      if (info) {
        const cfg = /** @type {{ name?: string, kind?: string }} */ (info.config || {});
        $("run-meta").textContent =
          (cfg.name || cfg.kind || "run") + " · " + info.runDir + " · checkpoints: " + (info.checkpoints.join(", ") || "none");
      } else {
        $("run-meta").textContent = S.runs.length + " runs: " + S.runs.map((r) => r.label).join(", ");
      }
      renderSummary();
      renderCharts();
      if (S.runs.length > 1) return getJson("/api/config-diff").then(renderConfigDiff);
    })
    .catch((e) => {
      $("status").textContent = "run: " + e.message;
    });
}

// module scripts run before DOMContentLoaded: the page's markup is all there by then
document.addEventListener("DOMContentLoaded", () => {
  getJson("/api/runs")
    .then((/** @type {import("./api.js").RunsAnswer} */ b) => {
      S.runs = b.runs.map((r) => ({ index: r.index, label: r.label, runDir: r.runDir, rows: [], info: null }));
      initCharts();
      initViewer();
      loadInfo();
      setInterval(loadInfo, 5000);
      poll();
    })
    .catch((e) => {
      $("status").textContent = e.message;
    });
});
