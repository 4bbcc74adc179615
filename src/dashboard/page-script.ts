// The dashboard page's browser script, as a string served inline (no build step): shared helpers,
// the metrics charts (page-charts.ts), the path graph (page-graph.ts) and the trajectory viewer
// (page-viewer.ts), then the start-up that lists the runs and starts polling.
// Browser-only code: it must not use Node APIs, and it writes text with textContent (no HTML injection).
import { CHARTS_SCRIPT } from "./page-charts.js";
import { GRAPH_SCRIPT } from "./page-graph.js";
import { VIEWER_SCRIPT } from "./page-viewer.js";

const COMMON = `
  var PALETTE = ["#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f", "#475569"];
  // runs: { index, label, runDir, rows, info }
  var S = { runs: [] };

  function $(id) { return document.getElementById(id); }
  function el(tag, props, kids) {
    var e = document.createElement(tag);
    if (props) for (var k in props) {
      if (k === "text") e.textContent = props[k];
      else if (k === "cls") e.className = props[k];
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), props[k]);
      else e.setAttribute(k, props[k]);
    }
    (kids || []).forEach(function (c) { if (c) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function svg(tag, attrs, text) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function json(v) { try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); } }
  // a value as a person reads it: strings as they are (JSON text parsed and indented), the rest as indented JSON
  function readable(v) {
    if (typeof v === "string") {
      var t = v.trim();
      if (t[0] === "{" || t[0] === "[") { try { return JSON.stringify(JSON.parse(t), null, 2); } catch (e) { /* not JSON: as written */ } }
      return v;
    }
    return v === undefined ? "" : json(v);
  }
  function code(text, props) { return el("pre", props || {}, [el("code", { text: text })]); }
  function fmtNum(v) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-4)) return v.toExponential(3);
    return String(Number(v.toPrecision(4)));
  }
  function fmtSeconds(s) {
    if (s === null || s === undefined) return "–";
    if (s < 60) return s.toFixed(1) + " s";
    var m = Math.floor(s / 60), h = Math.floor(m / 60);
    return h ? h + " h " + (m % 60) + " min" : m + " min " + Math.round(s % 60) + " s";
  }
  function getJson(url) { return fetch(url).then(function (r) { return r.json().then(function (b) { if (!r.ok) throw new Error(b.error || r.statusText); return b; }); }); }
`;

const BOOT = `
  function loadInfo() {
    return Promise.all(S.runs.map(function (run) {
      return getJson("/api/run?run=" + run.index).then(function (info) { run.info = info; });
    })).then(function () {
      if (S.runs.length === 1) {
        var info = S.runs[0].info, cfg = info.config || {};
        $("run-meta").textContent = (cfg.name || cfg.kind || "run") + " · " + info.runDir + " · checkpoints: " + (info.checkpoints.join(", ") || "none");
      } else {
        $("run-meta").textContent = S.runs.length + " runs: " + S.runs.map(function (r) { return r.label; }).join(", ");
      }
      renderSummary();
      renderCharts();
      if (S.runs.length > 1) return getJson("/api/config-diff").then(renderConfigDiff);
    }).catch(function (e) { $("status").textContent = "run: " + e.message; });
  }

  document.addEventListener("DOMContentLoaded", function () {
    getJson("/api/runs").then(function (b) {
      S.runs = b.runs.map(function (r) { return { index: r.index, label: r.label, runDir: r.runDir, rows: [], info: null }; });
      initCharts();
      initViewer();
      loadInfo();
      setInterval(loadInfo, 5000);
      poll();
    }).catch(function (e) { $("status").textContent = e.message; });
  });
`;

export const PAGE_SCRIPT = `
(function () {
  "use strict";
${COMMON}
${CHARTS_SCRIPT}
${GRAPH_SCRIPT}
${VIEWER_SCRIPT}
${BOOT}
})();
`;
