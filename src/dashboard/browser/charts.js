// The metrics section: polls each run's new metric lines, lays the metrics out by kind in sections
// of a responsive chart grid (eval first, timings last), lists metrics flat over the whole run as
// constants and turns a chart whose series repeat another's into a note on that one, keeps the
// charts (plot.js) in step with the data and the smoothing slider, and the run legend of overlays.
import { $, $input, el, fmtNum, getJson, PALETTE, S } from "./common.js";
import { bounded, constantOf, KINDS, kindOf, metricTable, rank, valuesSig } from "./metric-table.js";
import { C, chartData, chartSig, makeChart, mountPlot, seriesLabel, swatch } from "./plot.js";
import { renderPipeline } from "./pipeline.js";
import { renderWarnings } from "./summary.js";

/** @typedef {import("./metric-table.js").Metric} Metric */
/** @typedef {import("./plot.js").Chart} Chart */
/** @typedef {{ div: HTMLElement, grid: HTMLElement, constants: HTMLElement }} Section */
/** What a kind's section shows: the metrics charted, and the constants with their value per series. @typedef {{ charts: string[], constants: { key: string, vals: { id: string, v: number | null }[] }[] }} Plan */

/** @type {Record<string, Chart>} */
const charts = {};
/** @type {Record<string, Section>} */
const sections = {};

/** @param {string} kind */
function section(kind) {
  const s = sections[kind];
  if (s) return s;
  const grid = el("div", { cls: "chart-grid", "data-testid": "chart-grid" });
  const constants = el("div", { cls: "constants", "data-testid": "constants" });
  const div = el("div", { cls: "kind", "data-kind": kind }, [el("h3", { text: kind }), grid, constants]);
  return (sections[kind] = { div, grid, constants });
}

/**
 * Which metrics each kind's section charts and which it lists as constants, in rank order.
 * @param {Record<string, Metric>} t
 */
function planOf(t) {
  /** @type {Record<string, Plan>} */
  const plan = {};
  for (const k of KINDS) plan[k] = { charts: [], constants: [] };
  /** @type {Record<string, string>} */
  const drawn = {};
  for (const key of Object.keys(t).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))) {
    const cst = constantOf(key, t[key]);
    if (cst) {
      plan[kindOf(key)].constants.push({ key, vals: cst });
      continue;
    }
    // a chart whose every series repeats an earlier one's (reward.<kind> with one reward of that kind) is a note on that one
    const sig = valuesSig(t[key]);
    if (drawn[sig]) {
      t[drawn[sig]].notes.push("same values: " + key);
      continue;
    }
    drawn[sig] = key;
    plan[kindOf(key)].charts.push(key);
  }
  return plan;
}

/**
 * Draws or updates the chart of `key` in section `s`; a chart whose series or bounds changed is built anew.
 * @param {Section} s @param {string} key @param {Metric} m
 */
function drawChart(s, key, m) {
  const ids = Object.keys(m.series).sort((a, b) => {
    const x = m.series[a];
    const y = m.series[b];
    return x.run - y.run || (x.role < y.role ? -1 : x.role > y.role ? 1 : 0);
  });
  let c = charts[key];
  const data = chartData(m, ids);
  const fixed = bounded(key, m);
  if (c && c.sig !== chartSig(ids, fixed)) {
    c.plot?.destroy();
    c.div.remove();
    delete charts[key];
  }
  c = charts[key];
  if (!c) {
    c = charts[key] = makeChart(key, m, ids, fixed);
    s.grid.appendChild(c.div);
    mountPlot(c, data);
  } else {
    s.grid.appendChild(c.div);
    c.plot?.setData(data);
  }
  c.note.textContent = m.notes.join(" · ");
  c.note.hidden = !m.notes.length;
}

/** @param {Section} s @param {Plan} p @param {Record<string, Metric>} t */
function drawConstants(s, p, t) {
  s.constants.textContent = "";
  if (p.constants.length) s.constants.appendChild(el("b", { text: "constant:" }));
  for (const cst of p.constants) {
    const m = t[cst.key];
    const same = cst.vals.every((v) => v.v === cst.vals[0].v);
    const each = () => cst.vals.map((v) => seriesLabel(m.series[v.id].run, m.series[v.id].role) + " " + fmtNum(v.v)).join(", ");
    s.constants.appendChild(el("span", { "data-metric": cst.key, text: cst.key + " = " + (same ? fmtNum(cst.vals[0].v) : each()) }));
  }
}

/** Lays out and draws the metrics section from every run's rows so far, then the warnings. */
export function renderCharts() {
  const box = $("charts");
  const total = S.runs.reduce((n, r) => n + r.rows.length, 0);
  if (!total) {
    box.textContent = "no metrics yet (waiting for metrics.jsonl)";
    box.className = "empty";
    return;
  }
  if (box.className === "empty") {
    box.textContent = "";
    box.className = "";
  }
  const t = metricTable();
  let lo = Infinity;
  let hi = -Infinity;
  for (const tk in t)
    for (const id in t[tk].series)
      for (const st in t[tk].series[id].values) {
        lo = Math.min(lo, Number(st));
        hi = Math.max(hi, Number(st));
      }
  C.xRange = [lo, hi];
  const plan = planOf(t);
  /** @type {Set<string>} */
  const keep = new Set();
  for (const kind of KINDS) {
    const p = plan[kind];
    const s = section(kind);
    if (!p.charts.length && !p.constants.length) {
      s.div.remove();
      continue;
    }
    box.appendChild(s.div); // re-appended in KINDS order
    s.grid.hidden = !p.charts.length;
    for (const key of p.charts) {
      drawChart(s, key, t[key]);
      keep.add(key);
    }
    drawConstants(s, p, t);
  }
  for (const key in charts)
    if (!keep.has(key)) {
      charts[key].plot?.destroy();
      charts[key].div.remove();
      delete charts[key];
    }
  const last = Math.max(...S.runs.map((r) => (r.rows.length ? r.rows[r.rows.length - 1].step : -Infinity)));
  $("last-step").textContent = "step " + last;
  renderWarnings();
  renderPipeline();
}
function resmooth() {
  const t = metricTable();
  for (const key in charts) {
    const c = charts[key];
    c.plot?.setData(chartData(t[key], c.ids));
    for (let k = 0; k < c.ids.length; k++) c.plot?.setSeries(1 + 2 * k, { show: C.smooth > 0 });
  }
}

function renderRunLegend() {
  const box = $("run-legend");
  box.textContent = "";
  if (S.runs.length < 2) return;
  for (const r of S.runs)
    box.appendChild(
      el("span", { cls: "item", "data-run": r.label, title: r.runDir }, [swatch({ color: PALETTE[r.index % PALETTE.length] }), r.label]),
    );
}

/**
 * Fetches a run's metric lines after those it holds; true when they changed.
 * @param {import("./api.js").Run} run
 */
function pollRun(run) {
  return getJson("/api/metrics?run=" + run.index + "&after=" + run.rows.length).then(
    (/** @type {import("./api.js").MetricsAnswer} */ b) => {
      if (b.total < run.rows.length) {
        run.rows = []; // file rewritten (a resume): reload all
        return true;
      }
      if (b.rows.length) {
        run.rows = run.rows.concat(b.rows);
        return true;
      }
      return false;
    },
  );
}
let firstPoll = true;
/** Follows every run's metrics.jsonl, redrawing the charts when a run has new lines. */
export function poll() {
  Promise.all(S.runs.map(pollRun))
    .then((changed) => {
      if (firstPoll || changed.some(Boolean)) renderCharts();
      firstPoll = false;
    })
    .catch((e) => {
      $("status").textContent = "metrics: " + e.message;
    })
    .then(() => {
      setTimeout(poll, 2000);
    });
}
/** The run legend and the smoothing slider. */
export function initCharts() {
  renderRunLegend();
  $("smooth").addEventListener("input", () => {
    C.smooth = Number($input("smooth").value);
    $("smooth-value").textContent = C.smooth.toFixed(2);
    resmooth();
  });
}
