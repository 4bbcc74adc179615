// One chart of the metrics section: a uPlot plot of a metric's series (a colour per run, a dash per
// role when several runs share a chart), raw values faint behind the smoothed ones, the y axis fixed
// at [0, 1] for bounded metrics, the step and values under the cursor in a tooltip, and a width
// that follows its grid cell. charts.js decides which charts exist; this draws one.
import { el, fmtNum, PALETTE, S } from "./common.js";
import { ema } from "./metric-table.js";

/** @typedef {import("./metric-table.js").Metric} Metric */
/** @typedef {import("./api.js").UPlot} UPlot */
/** @typedef {{ color: string, dash?: number[] | null }} Style */
/**
 * A chart: its elements, the series ids it draws (with their styles and labels), whether its y axis
 * is bounded, the signature that tells when it must be built anew, its plot and the width drawn.
 * @typedef {{ key: string, div: HTMLElement, plotDiv: HTMLElement, legend: HTMLElement, note: HTMLElement, tip: HTMLElement,
 *   ids: string[], fixed: boolean, sig: string, styles: Style[], labels: string[], plot: UPlot | null, w: number }} Chart
 */

// uPlot is a classic script of the page (/vendor/uPlot.iife.min.js), run before any module
const UPlot = /** @type {{ uPlot: import("./api.js").UPlotClass }} */ (/** @type {unknown} */ (globalThis)).uPlot;
const DASHES = [null, [6, 3], [2, 3], [10, 3, 2, 3], [4, 6]];
const PLOT_H = 190;
// steps are whole numbers: no ticks between them
const STEP_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000, 100000];

/**
 * What the charts share: the smoothing weight, the chart under the pointer, the roles in order of
 * appearance (a role keeps its colour or dash) and the steps every chart spans.
 * @type {{ smooth: number, hover: Chart | null, roles: string[], xRange: [number, number] | null }}
 */
export const C = { smooth: 0, hover: null, roles: [], xRange: null };

/** @param {string} role */
function roleIndex(role) {
  let i = C.roles.indexOf(role);
  if (i < 0) {
    C.roles.push(role);
    i = C.roles.length - 1;
  }
  return i;
}
/** @param {number} run @param {string} role @returns {Style} */
function styleOf(run, role) {
  const ri = roleIndex(role);
  if (S.runs.length > 1) return { color: PALETTE[run % PALETTE.length], dash: DASHES[ri % DASHES.length] };
  return { color: PALETTE[ri % PALETTE.length], dash: null };
}
/** @param {number} run @param {string} role */
export function seriesLabel(run, role) {
  if (S.runs.length > 1) return S.runs[run].label + (role ? " · " + role : "");
  return role || "run";
}
/** @param {string} hex */
const fade = (hex) => hex + "55";
/** @param {Style} st */
export function swatch(st) {
  const e = el("span", { cls: "swatch" + (st.dash ? " dash" : "") });
  e.style.borderTopColor = st.color;
  return e;
}

/**
 * uPlot's data for series `ids` of `m`: the steps any of them has, then raw and smoothed values per series.
 * @param {Metric} m
 * @param {string[]} ids
 * @returns {import("./api.js").PlotData}
 */
export function chartData(m, ids) {
  /** @type {Record<string, 1>} */
  const steps = {};
  for (const id of ids) for (const s in m.series[id].values) steps[s] = 1;
  const xs = Object.keys(steps)
    .map(Number)
    .sort((a, b) => a - b);
  /** @type {(number | null)[][]} */
  const data = [xs];
  for (const id of ids) {
    const v = m.series[id].values;
    const raw = xs.map((x) => {
      const y = v[x];
      return y === undefined ? null : y;
    });
    data.push(raw, ema(raw, C.smooth));
  }
  return /** @type {import("./api.js").PlotData} */ (data);
}
/** Points only where a series has few of them. @param {UPlot} u @param {number} si */
function sparse(u, si) {
  let n = 0;
  for (const y of u.data[si]) if (y !== null) n++;
  return n <= 40;
}
/** @param {string[]} ids @param {boolean} fixed */
export const chartSig = (ids, fixed) => ids.join(",") + (fixed ? "|0-1" : "");

/**
 * A chart of `key`'s series `ids`, with its legend; not yet plotted (mountPlot).
 * @param {string} key
 * @param {Metric} m
 * @param {string[]} ids
 * @param {boolean} fixed
 * @returns {Chart}
 */
export function makeChart(key, m, ids, fixed) {
  const div = el("div", { cls: "chart", "data-metric": key }, [el("h4", { text: key, title: key })]);
  const plotDiv = el("div", { cls: "plot" });
  const legend = el("div", { cls: "legend", "data-testid": "chart-legend" });
  const note = el("div", { cls: "note", "data-testid": "chart-note" });
  const tip = el("div", { cls: "tip", "data-testid": "tooltip" });
  tip.hidden = true;
  div.appendChild(plotDiv);
  div.appendChild(legend);
  div.appendChild(note);
  div.appendChild(tip);
  const styles = ids.map((id) => styleOf(m.series[id].run, m.series[id].role));
  const labels = ids.map((id) => seriesLabel(m.series[id].run, m.series[id].role));
  ids.forEach((_id, k) => {
    legend.appendChild(el("span", { cls: "item", "data-series": labels[k] }, [swatch(styles[k]), labels[k]]));
  });
  return { key, div, plotDiv, legend, note, tip, ids, fixed, sig: chartSig(ids, fixed), styles, labels, plot: null, w: 0 };
}

/**
 * The y axis as wide as its longest tick label, so no label is cut off (uPlot's axis autosize recipe).
 * @type {Exclude<import("./api.js").AxisSize, number>}
 */
const yAxisSize = (u, values, ai, cycle) => {
  // after init an axis holds uPlot's resolved values: its size so far, font as [css, px], tick size
  const axis = /** @type {{ _size: number, font: [string, number], ticks: { size: number }, gap: number }} */ (
    /** @type {unknown} */ (u.axes[ai])
  );
  if (cycle > 1) return axis._size;
  let w = 0;
  if (values) {
    u.ctx.font = axis.font[0];
    for (const v of values) w = Math.max(w, u.ctx.measureText(v).width);
  }
  return Math.max(40, Math.ceil(axis.ticks.size + axis.gap + w / devicePixelRatio + 6));
};
/**
 * Bounded metrics keep [0, 1] so a small change stays small; a value outside widens it rather than being cut off.
 * @type {import("./api.js").ScaleRange}
 */
const unitRange = (_u, lo, hi) => [Math.min(0, lo === null ? 0 : lo), Math.max(1, hi === null ? 1 : hi)];
/**
 * Every chart spans the same steps, so a sparse eval sits where it happened.
 * @type {import("./api.js").ScaleRange}
 */
const stepRange = (_u, lo, hi) => {
  const r = C.xRange || [lo, hi];
  return r[0] === r[1] ? [r[0] - 1, r[1] + 1] : r;
};

/** @param {Chart} c */
function seriesOptions(c) {
  /** @type {import("./api.js").PlotSeries[]} */
  const series = [{ label: "step" }];
  c.ids.forEach((_id, k) => {
    const st = c.styles[k];
    const dash = st.dash || undefined;
    series.push({
      label: c.labels[k] + " (raw)",
      stroke: fade(st.color),
      width: 1,
      dash,
      spanGaps: true,
      show: C.smooth > 0,
      points: { show: false },
    });
    series.push({ label: c.labels[k], stroke: st.color, width: 1.6, dash, spanGaps: true, points: { show: sparse, size: 5 } });
  });
  return series;
}
/**
 * Plots chart `c` with `data` into its cell, and keeps its width that of the cell.
 * @param {Chart} c
 * @param {import("./api.js").PlotData} data
 */
export function mountPlot(c, data) {
  c.w = c.plotDiv.clientWidth || 320;
  /** @type {import("./api.js").PlotOptions} */
  const opts = {
    width: c.w,
    height: PLOT_H,
    scales: { x: { time: false, range: stepRange }, y: c.fixed ? { range: unitRange } : { auto: true } },
    legend: { show: false },
    cursor: { sync: { key: "maso-steps" }, drag: { x: false, y: false } },
    axes: [{ incrs: STEP_INCRS }, { size: yAxisSize, values: (_u, vals) => vals.map(fmtNum) }],
    series: seriesOptions(c),
    hooks: {
      setCursor: [(u) => showTip(c, u)],
      // the y range drawn, for readers and tests
      draw: [(u) => c.div.setAttribute("data-y-range", u.scales.y.min + "," + u.scales.y.max)],
    },
  };
  const plot = new UPlot(opts, data, c.plotDiv);
  c.plot = plot;
  plot.over.addEventListener("mouseenter", () => {
    C.hover = c;
  });
  plot.over.addEventListener("mouseleave", () => {
    if (C.hover === c) C.hover = null;
    c.tip.hidden = true;
  });
  // the plot follows its grid cell: no fixed width
  new ResizeObserver(() => {
    const w = c.plotDiv.clientWidth;
    if (w > 0 && Math.abs(w - c.w) >= 1) {
      c.w = w;
      plot.setSize({ width: w, height: PLOT_H });
    }
  }).observe(c.plotDiv);
}
/**
 * The tooltip of the chart under the pointer: the step, and each series' value (smoothed and raw when smoothing).
 * @param {Chart} c
 * @param {UPlot} u
 */
function showTip(c, u) {
  const idx = u.cursor.idx;
  const tip = c.tip;
  const left = u.cursor.left ?? -1;
  const top = u.cursor.top ?? 0;
  if (C.hover !== c || idx === null || idx === undefined || left < 0) {
    tip.hidden = true;
    return;
  }
  tip.textContent = "";
  tip.appendChild(el("b", { text: "step " + u.data[0][idx] }));
  c.labels.forEach((label, k) => {
    const raw = u.data[1 + 2 * k][idx];
    const sm = u.data[2 + 2 * k][idx];
    const row = el("div", { cls: "row", "data-series": label }, [
      swatch(c.styles[k]),
      label,
      el("span", { cls: "v", text: fmtNum(C.smooth > 0 ? sm : raw) }),
    ]);
    if (C.smooth > 0 && raw !== null) row.appendChild(el("span", { cls: "raw", text: "raw " + fmtNum(raw) }));
    tip.appendChild(row);
  });
  tip.hidden = false;
  const over = u.over.getBoundingClientRect();
  const box = c.div.getBoundingClientRect();
  let x = over.left - box.left + left + 14;
  const y = over.top - box.top + top + 12;
  if (x + tip.offsetWidth > c.div.clientWidth) x = Math.max(0, over.left - box.left + left - tip.offsetWidth - 14);
  tip.style.left = x + "px";
  tip.style.top = Math.min(y, c.div.clientHeight - tip.offsetHeight) + "px";
}
