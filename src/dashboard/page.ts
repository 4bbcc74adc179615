// The dashboard's single HTML page: layout, inline CSS, uPlot from /vendor and the page's ES modules
// from /browser (src/dashboard/browser/). Markup only; data arrives from the JSON API in app.ts.
import { BROWSER_ENTRY } from "./browser-modules.js";
import { PAGE_CSS } from "./page-style.js";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page for one or more run directories (their paths only appear as text). */
export function pageHtml(runDirs: string | readonly string[]): string {
  const dirs = typeof runDirs === "string" ? [runDirs] : runDirs;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>maso · ${escapeHtml(dirs.join(", "))}</title>
<link rel="stylesheet" href="/vendor/uPlot.min.css">
<style>${PAGE_CSS}</style>
<script src="/vendor/uPlot.iife.min.js"></script>
</head>
<body>
<header><h1>maso dashboard</h1><span class="meta" id="run-meta">${escapeHtml(dirs.join(", "))}</span><span class="meta" id="last-step"></span><span class="meta" id="status"></span></header>
<main>
<section><h2>Run summary</h2><div id="summary" data-testid="summary" class="empty">loading…</div>
<div id="config-diff" class="sub" data-testid="config-diff" hidden></div>
<div id="warnings" class="sub warnings" data-testid="warnings" hidden></div>
<div id="pipeline" class="sub pipeline" data-testid="pipeline" hidden></div></section>
<section>
<div class="section-head"><h2>Metrics</h2>
<div id="run-legend" class="legend" data-testid="run-legend"></div>
<label class="smooth">smoothing <input id="smooth" data-testid="smooth" type="range" min="0" max="0.99" step="0.01" value="0"> <span id="smooth-value">0</span></label>
</div>
<div id="charts" class="empty">loading…</div>
</section>
<section>
<h2>Trajectories</h2>
<div class="controls">
<label id="run-pick" hidden>run <select id="run-select" data-testid="run-select"></select></label>
<label>step <select id="step-select" data-testid="step-select"></select></label>
<label>search <input id="ep-search" data-testid="ep-search" type="search" placeholder="task or episode id" size="16"></label>
<label>reward <input id="ep-min" data-testid="ep-min" type="number" step="any" placeholder="min" class="num"> – <input id="ep-max" data-testid="ep-max" type="number" step="any" placeholder="max" class="num"></label>
<label>status <select id="ep-status" data-testid="ep-status"><option value="">all</option><option value="ok">ok</option><option value="failed">failed</option><option value="step_limit">step limit</option></select></label>
<span class="meta" id="ep-count" data-testid="ep-count"></span>
</div>
<div class="controls">
<label>episode <select id="episode-select" data-testid="episode-select"></select></label>
<button id="sib-prev" data-testid="sib-prev" type="button">◀ sibling</button><span class="meta" id="sib-info" data-testid="sib-info"></span><button id="sib-next" data-testid="sib-next" type="button">sibling ▶</button>
<button id="prev" type="button">◀ record</button><button id="next" type="button">record ▶</button>
</div>
<div id="viewer" hidden>
<div id="graph" data-testid="graph"></div>
<div class="viewer"><ol id="record-list" data-testid="record-list"></ol><div id="record" data-testid="record"></div></div>
</div>
</section>
</main>
<script type="module" src="${BROWSER_ENTRY}"></script>
</body>
</html>`;
}
