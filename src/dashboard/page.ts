// The dashboard's single HTML page: layout, inline CSS and script, uPlot from /vendor. Markup only;
// data arrives from the JSON API in app.ts.
import { PAGE_SCRIPT } from "./page-script.js";
import { PAGE_CSS } from "./page-style.js";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page for a run directory (its path only appears as text). */
export function pageHtml(runDir: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>maso · ${escapeHtml(runDir)}</title>
<link rel="stylesheet" href="/vendor/uPlot.min.css">
<style>${PAGE_CSS}</style>
<script src="/vendor/uPlot.iife.min.js"></script>
</head>
<body>
<header><h1>maso dashboard</h1><span class="meta" id="run-meta">${escapeHtml(runDir)}</span><span class="meta" id="last-step"></span><span class="meta" id="status"></span></header>
<main>
<section><h2>Metrics</h2><div id="charts" class="empty">loading…</div></section>
<section>
<h2>Trajectories</h2>
<div class="controls">
<label>step <select id="step-select" data-testid="step-select"></select></label>
<label>episode <select id="episode-select" data-testid="episode-select"></select></label>
<button id="prev" type="button">◀ prev</button><button id="next" type="button">next ▶</button>
</div>
<div id="viewer" hidden>
<div id="graph" data-testid="graph"></div>
<div class="viewer"><ol id="record-list" data-testid="record-list"></ol><div id="record" data-testid="record"></div></div>
</div>
</section>
</main>
<script>${PAGE_SCRIPT}</script>
</body>
</html>`;
}
