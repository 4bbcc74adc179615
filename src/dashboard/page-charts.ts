// Browser script (a string, see page-script.ts): the metrics section. Polls each run's new metric
// lines, groups metrics by kind into sections of a responsive chart grid (eval first, timings last),
// collapses metrics flat over the whole run into a "constant" list and a chart whose series repeat
// another's into a note on that one, charts the judges' stats beside the rewards, fixes the y axis of
// bounded metrics at [0, 1], overlays runs (a colour per run, a dash per role when several runs share
// a chart), smooths with a debiased EMA (raw kept faint), shows step and values under the cursor,
// adds the step-0 eval, and fills the run summary panel, the config differences of overlaid runs and
// the list of the runs' warnings.
export const CHARTS_SCRIPT = String.raw`
  // what says whether training helps comes first: the held-out metric, then the rewards (total, by
  // reward name, by kind) and the judges behind them; wall-clock figures last
  var KINDS = ["eval", "rewards", "policy", "lengths", "other", "timing"];
  var ORDER = ["eval.metric", "eval", "reward.total", "reward.byName", "reward", "formatFailureRate", "judges", "loss", "entropy", "kl", "approxKl", "clipFrac", "gradNorm", "advantage", "value", "length", "outputLength", "promptLength", "tokens", "timings.stepMs", "timings"];
  // metrics that repeat another of the same row: dropped where the other is present (older runs wrote both)
  var ALIASES = { "length.prompt": "promptLength" };
  var DASHES = [null, [6, 3], [2, 3], [10, 3, 2, 3], [4, 6]];
  var SKIP = { step: 1, time: 1, roles: 1, warnings: 1 };
  var PLOT_H = 190;
  // a value equal to the first to this relative precision counts as the same (whitened advantage.std is 1 to float precision)
  var SAME = 1e-6;
  // steps are whole numbers: no ticks between them
  var STEP_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000, 100000];
  var C = { charts: {}, sections: {}, roles: [], smooth: 0, hover: null };

  function kindOf(key) {
    // judges.<rule>.*: how far the judge's verdicts, which are rewards, can be trusted
    if (/^(reward|formatFailure|judges\.)/.test(key)) return "rewards";
    if (/^eval/.test(key)) return "eval";
    if (/^timings\.|Ms$|PerSecond$/.test(key)) return "timing";
    if (/[lL]ength|[tT]okens/.test(key)) return "lengths";
    if (/^(entropy|kl|approxKl|clipFrac|gradNorm|advantage|value|loss|lr|updated|skippedMinibatches)/.test(key)) return "policy";
    return "other";
  }
  function rank(key) {
    for (var i = 0; i < ORDER.length; i++) if (key === ORDER[i] || key.indexOf(ORDER[i] + ".") === 0 || key.indexOf(ORDER[i]) === 0) return i;
    return ORDER.length;
  }
  function flatten(obj, prefix, out) {
    for (var k in obj) {
      if (!prefix && SKIP[k]) continue;
      var v = obj[k];
      if (typeof v === "number" && isFinite(v)) out[prefix + k] = v;
      else if (v && typeof v === "object" && !Array.isArray(v)) flatten(v, prefix + k + ".", out);
    }
    return out;
  }
  function dropAliases(f) { for (var a in ALIASES) if (a in f && ALIASES[a] in f) delete f[a]; return f; }
  // [0, 1] by definition, read from the name: shares and rates (the last part ends in Rate, Frac,
  // Fraction or Share: formatFailureRate, clipFrac, passRate; a judge's agreement is a share too) and
  // 0/1 flags; per-second and learning rates are not
  var FLAGS = { updated: 1, agreement: 1 };
  function boundedByName(key) {
    var last = key.slice(key.lastIndexOf(".") + 1);
    if (FLAGS[last]) return true;
    return /(rate|frac|fraction|share)$/i.test(last) && !/^(lr|learningrate)$/i.test(last);
  }
  // eval.metric is whatever the eval's metric returns, a judge's meanScore whatever its range allows
  // (any finite numbers): [0, 1] while every value lies there
  var BOUNDED_BY_DATA = /^(eval\.metric|judges\..+\.meanScore)$/;
  function bounded(key, m) {
    if (!BOUNDED_BY_DATA.test(key)) return boundedByName(key);
    for (var id in m.series) for (var s in m.series[id].values) { var v = m.series[id].values[s]; if (v < 0 || v > 1) return false; }
    return true;
  }
  function roleIndex(role) { var i = C.roles.indexOf(role); if (i < 0) { C.roles.push(role); i = C.roles.length - 1; } return i; }
  function styleOf(run, role) {
    var ri = roleIndex(role);
    if (S.runs.length > 1) return { color: PALETTE[run % PALETTE.length], dash: DASHES[ri % DASHES.length] };
    return { color: PALETTE[ri % PALETTE.length], dash: null };
  }
  function seriesLabel(run, role) {
    if (S.runs.length > 1) return S.runs[run].label + (role ? " · " + role : "");
    return role || "run";
  }

  // key -> { series: { id -> { run, role, values: { step: v } } }, notes: [] }
  function metricTable() {
    var t = {};
    function series(key, run, role) {
      var k = t[key] || (t[key] = { series: {}, notes: [] });
      var id = run + "|" + role;
      return k.series[id] || (k.series[id] = { run: run, role: role, values: {} });
    }
    S.runs.forEach(function (run) {
      run.rows.forEach(function (row) {
        if (typeof row.step !== "number" || !isFinite(row.step)) return;
        var glob = dropAliases(flatten(row, "", {}));
        for (var k in glob) series(k, run.index, "").values[row.step] = glob[k];
        var roles = row.roles || {};
        for (var role in roles) { var f = dropAliases(flatten(roles[role], "", {})); for (var k2 in f) series(k2, run.index, role).values[row.step] = f[k2]; }
      });
    });
    // the eval before training: a step-0 row, else summary.json's before, else a note saying so
    S.runs.forEach(function (run) {
      var ov = run.info && run.info.overview, has = t["eval.metric"] && t["eval.metric"].series[run.index + "|"];
      if (!has && !(ov && ov.before)) return;
      var s = series("eval.metric", run.index, ""), who = S.runs.length > 1 ? run.label + ": " : "";
      if (s.values[0] !== undefined) return;
      if (ov && ov.before) { s.values[0] = ov.before.metric; t["eval.metric"].notes.push(who + "step 0 from summary.json before"); }
      else t["eval.metric"].notes.push(who + "no step-0 eval");
    });
    return t;
  }
  // a metric is constant when every series holds one value (to SAME) over at least two steps (the eval metric always charts)
  function constantOf(key, m) {
    if (key === "eval.metric") return null;
    var ids = Object.keys(m.series), points = 0, vals = [];
    for (var i = 0; i < ids.length; i++) {
      var v = m.series[ids[i]].values, first = null, n = 0;
      for (var s in v) { if (first === null) first = v[s]; else if (Math.abs(v[s] - first) > SAME * Math.max(1, Math.abs(first))) return null; n++; }
      points = Math.max(points, n);
      vals.push({ id: ids[i], v: first });
    }
    return points >= 2 ? vals : null;
  }
  // the series ids and every value, to tell a chart that repeats another
  function valuesSig(m) {
    return Object.keys(m.series).sort().map(function (id) {
      var v = m.series[id].values;
      return id + ":" + Object.keys(v).sort(function (a, b) { return a - b; }).map(function (s) { return s + "=" + v[s].toPrecision(12); }).join(";");
    }).join("/");
  }
  function ema(arr, w) {
    if (!w) return arr.slice();
    var out = [], last = 0, n = 0;
    for (var i = 0; i < arr.length; i++) {
      var v = arr[i];
      if (v === null) { out.push(null); continue; }
      last = last * w + (1 - w) * v; n++;
      out.push(last / (1 - Math.pow(w, n)));
    }
    return out;
  }
  function fade(hex) { return hex + "55"; }
  function swatch(st) { var e = el("span", { cls: "swatch" + (st.dash ? " dash" : "") }); e.style.borderTopColor = st.color; return e; }

  function chartData(m, ids) {
    var steps = {};
    ids.forEach(function (id) { for (var s in m.series[id].values) steps[s] = 1; });
    var xs = Object.keys(steps).map(Number).sort(function (a, b) { return a - b; });
    var data = [xs];
    ids.forEach(function (id) {
      var v = m.series[id].values, raw = xs.map(function (x) { var y = v[x]; return y === undefined ? null : y; });
      data.push(raw, ema(raw, C.smooth));
    });
    return data;
  }
  function sparse(u, si) { var d = u.data[si], n = 0; for (var i = 0; i < d.length; i++) if (d[i] !== null) n++; return n <= 40; }
  function makeChart(key, m, ids, fixed) {
    var div = el("div", { cls: "chart", "data-metric": key }, [el("h4", { text: key, title: key })]);
    var plotDiv = el("div", { cls: "plot" });
    var legend = el("div", { cls: "legend", "data-testid": "chart-legend" });
    var note = el("div", { cls: "note", "data-testid": "chart-note" });
    var tip = el("div", { cls: "tip", "data-testid": "tooltip" });
    tip.hidden = true;
    div.appendChild(plotDiv); div.appendChild(legend); div.appendChild(note); div.appendChild(tip);
    var c = { key: key, div: div, plotDiv: plotDiv, legend: legend, note: note, tip: tip, ids: ids, fixed: fixed, sig: chartSig(ids, fixed), plot: null, w: 0 };
    c.styles = ids.map(function (id) { var s = m.series[id]; return styleOf(s.run, s.role); });
    c.labels = ids.map(function (id) { var s = m.series[id]; return seriesLabel(s.run, s.role); });
    ids.forEach(function (id, k) { legend.appendChild(el("span", { cls: "item", "data-series": c.labels[k] }, [swatch(c.styles[k]), c.labels[k]])); });
    return c;
  }
  function chartSig(ids, fixed) { return ids.join(",") + (fixed ? "|0-1" : ""); }
  // the y axis as wide as its longest tick label, so no label is cut off (uPlot's axis autosize recipe)
  function yAxisSize(u, values, ai, cycle) {
    var axis = u.axes[ai];
    if (cycle > 1) return axis._size;
    var w = 0;
    if (values) { u.ctx.font = axis.font[0]; values.forEach(function (v) { w = Math.max(w, u.ctx.measureText(v).width); }); }
    return Math.max(40, Math.ceil(axis.ticks.size + axis.gap + w / devicePixelRatio + 6));
  }
  // bounded metrics keep [0, 1] so a small change stays small; a value outside widens it rather than being cut off
  function unitRange(u, lo, hi) { return [Math.min(0, lo === null ? 0 : lo), Math.max(1, hi === null ? 1 : hi)]; }
  function mountPlot(c, data) {
    var series = [{ label: "step" }];
    c.ids.forEach(function (id, k) {
      var st = c.styles[k], dash = st.dash || undefined;
      series.push({ label: c.labels[k] + " (raw)", stroke: fade(st.color), width: 1, dash: dash, spanGaps: true, show: C.smooth > 0, points: { show: false } });
      series.push({ label: c.labels[k], stroke: st.color, width: 1.6, dash: dash, spanGaps: true, points: { show: sparse, size: 5 } });
    });
    c.w = c.plotDiv.clientWidth || 320;
    c.plot = new uPlot({
      width: c.w, height: PLOT_H,
      // every chart spans the same steps, so a sparse eval sits where it happened
      scales: {
        x: { time: false, range: function (u, lo, hi) { var r = C.xRange || [lo, hi]; return r[0] === r[1] ? [r[0] - 1, r[1] + 1] : r; } },
        y: c.fixed ? { range: unitRange } : { auto: true },
      },
      legend: { show: false },
      cursor: { sync: { key: "maso-steps" }, drag: { x: false, y: false } },
      axes: [{ incrs: STEP_INCRS }, { size: yAxisSize, values: function (u, vals) { return vals.map(fmtNum); } }],
      series: series,
      hooks: {
        setCursor: [function (u) { showTip(c, u); }],
        // the y range drawn, for readers and tests
        draw: [function (u) { c.div.setAttribute("data-y-range", u.scales.y.min + "," + u.scales.y.max); }],
      },
    }, data, c.plotDiv);
    c.plot.over.addEventListener("mouseenter", function () { C.hover = c; });
    c.plot.over.addEventListener("mouseleave", function () { if (C.hover === c) C.hover = null; c.tip.hidden = true; });
    // the plot follows its grid cell: no fixed width
    new ResizeObserver(function () {
      var w = c.plotDiv.clientWidth;
      if (w > 0 && Math.abs(w - c.w) >= 1) { c.w = w; c.plot.setSize({ width: w, height: PLOT_H }); }
    }).observe(c.plotDiv);
  }
  function showTip(c, u) {
    var idx = u.cursor.idx, tip = c.tip;
    if (C.hover !== c || idx === null || idx === undefined || u.cursor.left < 0) { tip.hidden = true; return; }
    tip.textContent = "";
    tip.appendChild(el("b", { text: "step " + u.data[0][idx] }));
    c.labels.forEach(function (label, k) {
      var raw = u.data[1 + 2 * k][idx], sm = u.data[2 + 2 * k][idx];
      var row = el("div", { cls: "row", "data-series": label }, [swatch(c.styles[k]), label, el("span", { cls: "v", text: fmtNum(C.smooth > 0 ? sm : raw) })]);
      if (C.smooth > 0 && raw !== null) row.appendChild(el("span", { cls: "raw", text: "raw " + fmtNum(raw) }));
      tip.appendChild(row);
    });
    tip.hidden = false;
    var over = u.over.getBoundingClientRect(), box = c.div.getBoundingClientRect();
    var x = over.left - box.left + u.cursor.left + 14, y = over.top - box.top + u.cursor.top + 12;
    if (x + tip.offsetWidth > c.div.clientWidth) x = Math.max(0, over.left - box.left + u.cursor.left - tip.offsetWidth - 14);
    tip.style.left = x + "px";
    tip.style.top = Math.min(y, c.div.clientHeight - tip.offsetHeight) + "px";
  }
  function section(kind) {
    var s = C.sections[kind];
    if (s) return s;
    var grid = el("div", { cls: "chart-grid", "data-testid": "chart-grid" });
    var constants = el("div", { cls: "constants", "data-testid": "constants" });
    var div = el("div", { cls: "kind", "data-kind": kind }, [el("h3", { text: kind }), grid, constants]);
    return (C.sections[kind] = { div: div, grid: grid, constants: constants });
  }

  function renderCharts() {
    var box = $("charts");
    var total = S.runs.reduce(function (n, r) { return n + r.rows.length; }, 0);
    if (!total) { box.textContent = "no metrics yet (waiting for metrics.jsonl)"; box.className = "empty"; return; }
    if (box.className === "empty") { box.textContent = ""; box.className = ""; }
    var t = metricTable(), plan = {}, lo = Infinity, hi = -Infinity;
    for (var tk in t) for (var id in t[tk].series) for (var st in t[tk].series[id].values) { lo = Math.min(lo, Number(st)); hi = Math.max(hi, Number(st)); }
    C.xRange = [lo, hi];
    KINDS.forEach(function (k) { plan[k] = { charts: [], constants: [] }; });
    var drawn = {};
    Object.keys(t).sort(function (a, b) { return rank(a) - rank(b) || (a < b ? -1 : 1); }).forEach(function (key) {
      var cst = constantOf(key, t[key]);
      if (cst) { plan[kindOf(key)].constants.push({ key: key, vals: cst }); return; }
      // a chart whose every series repeats an earlier one's (reward.<kind> with one reward of that kind) is a note on that one
      var sig = valuesSig(t[key]);
      if (drawn[sig]) { t[drawn[sig]].notes.push("same values: " + key); return; }
      drawn[sig] = key;
      plan[kindOf(key)].charts.push(key);
    });
    var keep = {};
    KINDS.forEach(function (kind) {
      var p = plan[kind], s = section(kind);
      if (!p.charts.length && !p.constants.length) { s.div.remove(); return; }
      box.appendChild(s.div); // re-appended in KINDS order
      s.grid.hidden = !p.charts.length;
      p.charts.forEach(function (key) {
        var m = t[key], ids = Object.keys(m.series).sort(function (a, b) { var x = m.series[a], y = m.series[b]; return x.run - y.run || (x.role < y.role ? -1 : x.role > y.role ? 1 : 0); });
        var c = C.charts[key], data = chartData(m, ids), fixed = bounded(key, m);
        if (c && c.sig !== chartSig(ids, fixed)) { c.plot.destroy(); c.div.remove(); c = null; }
        if (!c) { c = C.charts[key] = makeChart(key, m, ids, fixed); s.grid.appendChild(c.div); mountPlot(c, data); }
        else { s.grid.appendChild(c.div); c.plot.setData(data); }
        c.note.textContent = m.notes.join(" · ");
        c.note.hidden = !m.notes.length;
        keep[key] = 1;
      });
      s.constants.textContent = "";
      if (p.constants.length) s.constants.appendChild(el("b", { text: "constant:" }));
      p.constants.forEach(function (cst) {
        var m = t[cst.key], same = cst.vals.every(function (v) { return v.v === cst.vals[0].v; });
        var text = same ? fmtNum(cst.vals[0].v) : cst.vals.map(function (v) { var s2 = m.series[v.id]; return seriesLabel(s2.run, s2.role) + " " + fmtNum(v.v); }).join(", ");
        s.constants.appendChild(el("span", { "data-metric": cst.key, text: cst.key + " = " + text }));
      });
    });
    for (var key in C.charts) if (!keep[key]) { C.charts[key].plot.destroy(); C.charts[key].div.remove(); delete C.charts[key]; }
    var last = Math.max.apply(null, S.runs.map(function (r) { return r.rows.length ? r.rows[r.rows.length - 1].step : -Infinity; }));
    $("last-step").textContent = "step " + last;
    renderWarnings();
  }
  function resmooth() {
    var t = metricTable();
    for (var key in C.charts) {
      var c = C.charts[key];
      c.plot.setData(chartData(t[key], c.ids));
      for (var k = 0; k < c.ids.length; k++) c.plot.setSeries(1 + 2 * k, { show: C.smooth > 0 });
    }
  }

  function renderRunLegend() {
    var box = $("run-legend");
    box.textContent = "";
    if (S.runs.length < 2) return;
    S.runs.forEach(function (r) { box.appendChild(el("span", { cls: "item", "data-run": r.label, title: r.runDir }, [swatch({ color: PALETTE[r.index % PALETTE.length] }), r.label])); });
  }
  function renderSummary() {
    var box = $("summary");
    box.textContent = ""; box.className = "";
    var runs = S.runs.filter(function (r) { return r.info; });
    var ov = function (r) { return r.info.overview; };
    var rows = [
      ["name", function (r) { return ov(r).name || "–"; }],
      ["state", function (r) { return ov(r).finished ? "finished" + (ov(r).kind ? " (" + ov(r).kind + ")" : "") : "running or stopped (no summary.json)"; }],
      ["steps", function (r) { var o = ov(r); return (o.lastStep === null ? "–" : o.lastStep) + (o.steps !== null ? " / " + o.steps : ""); }],
      ["wall time", function (r) { return fmtSeconds(ov(r).wallSeconds); }],
      ["eval before", function (r) { var b = ov(r).before; return b ? fmtNum(b.metric) + (b.source === "summary" ? " (summary.json)" : " (step 0)") : "no step-0 eval"; }],
      ["eval after", function (r) { var o = ov(r); if (!o.after) return "–"; return fmtNum(o.after.metric) + (o.after.step !== null ? " (step " + o.after.step + ")" : "") + (o.before ? ", Δ " + (o.after.metric >= o.before.metric ? "+" : "") + fmtNum(o.after.metric - o.before.metric) : ""); }],
      ["best", function (r) { var b = ov(r).best; return b ? "step " + b.step + " (" + fmtNum(b.metric) + ")" : "–"; }],
      ["checkpoints", function (r) { return r.info.checkpoints.join(", ") || "none"; }],
      ["cast", function (r) { var c = ov(r).cast; return Object.keys(c).map(function (role) { return role + " → " + c[role]; }).join("\n") || "–"; }],
    ];
    var table = el("table", { cls: "summary" }, [el("tr", {}, [el("th", { text: "" })].concat(runs.map(function (r) { return el("th", { title: r.runDir, text: r.label }); })))]);
    rows.forEach(function (row) {
      table.appendChild(el("tr", { "data-row": row[0] }, [el("th", { text: row[0] })].concat(runs.map(function (r) { var td = el("td", { text: row[1](r) }); td.style.whiteSpace = "pre-line"; return td; }))));
    });
    box.appendChild(table);
  }

  // config fields that differ between overlaid runs (from /api/config-diff): path, then a value per run
  function renderConfigDiff(b) {
    var box = $("config-diff");
    box.textContent = "";
    box.hidden = S.runs.length < 2;
    if (box.hidden) return;
    box.appendChild(el("h3", { text: "config differences" }));
    var none = b.missing.map(function (i) { return S.runs[i].label; });
    if (none.length) box.appendChild(el("div", { cls: "note", text: "no config.json: " + none.join(", ") }));
    if (!b.differences.length) { box.appendChild(el("div", { cls: "empty", text: "none: every config.json holds the same fields and values" })); return; }
    var table = el("table", { cls: "summary" }, [el("tr", {}, [el("th", { text: "field" })].concat(S.runs.map(function (r) { return el("th", { title: r.runDir, text: r.label }); })))]);
    b.differences.forEach(function (d) {
      table.appendChild(el("tr", { "data-path": d.path }, [el("th", { text: d.path })].concat(d.values.map(function (v) { return el("td", { text: v === null ? "–" : v }); }))));
    });
    box.appendChild(table);
    if (b.more) box.appendChild(el("div", { cls: "note", text: "… " + b.more + " more" }));
  }

  // the runs' warnings (a row's warnings: { code, role?, message, hint }), one line per run, code and role,
  // with the steps it came up at and its latest message; whatever the code, so new kinds show as they come
  var MAX_WARNINGS = 30;
  function warningGroups() {
    var groups = [], byKey = {};
    S.runs.forEach(function (run) {
      run.rows.forEach(function (row) {
        if (!Array.isArray(row.warnings)) return;
        row.warnings.forEach(function (w) {
          if (!w || typeof w !== "object") return;
          var code = typeof w.code === "string" ? w.code : "WARNING", role = typeof w.role === "string" ? w.role : "";
          var k = run.index + "|" + code + "|" + role, g = byKey[k];
          if (!g) groups.push(g = byKey[k] = { run: run, code: code, role: role, steps: [] });
          if (g.steps[g.steps.length - 1] !== row.step) g.steps.push(row.step);
          // the steps are listed once: a message's own "step N: " would repeat them
          g.message = typeof w.message === "string" ? w.message.replace(/^step \d+: /, "") : "";
          g.hint = typeof w.hint === "string" ? w.hint : "";
        });
      });
    });
    return groups;
  }
  // [1, 2, 3, 5] -> "1–3, 5"; a long list keeps its first and last ranges
  function stepRanges(steps) {
    var out = [], i = 0;
    while (i < steps.length) {
      var j = i;
      while (j + 1 < steps.length && steps[j + 1] === steps[j] + 1) j++;
      out.push(j > i ? steps[i] + "–" + steps[j] : String(steps[i]));
      i = j + 1;
    }
    return out.length > 10 ? out.slice(0, 5).join(", ") + ", …, " + out.slice(-3).join(", ") : out.join(", ");
  }
  function renderWarnings() {
    var box = $("warnings"), groups = warningGroups();
    box.textContent = "";
    box.hidden = !groups.length;
    if (!groups.length) return;
    box.appendChild(el("h3", { text: "warnings" }));
    var list = el("ul", {});
    groups.slice(0, MAX_WARNINGS).forEach(function (g) {
      var who = (S.runs.length > 1 ? g.run.label + " · " : "") + g.code + (g.role ? " · " + g.role : "");
      var when = (g.steps.length > 1 ? "steps " : "step ") + stepRanges(g.steps) + (g.steps.length > 1 ? " (" + g.steps.length + "×)" : "");
      list.appendChild(el("li", { "data-code": g.code }, [el("b", { text: who }), " " + when + ": " + g.message, g.hint ? el("div", { cls: "hint", text: g.hint }) : null]));
    });
    if (groups.length > MAX_WARNINGS) list.appendChild(el("li", { text: "… " + (groups.length - MAX_WARNINGS) + " more" }));
    box.appendChild(list);
  }

  function pollRun(run) {
    return getJson("/api/metrics?run=" + run.index + "&after=" + run.rows.length).then(function (b) {
      if (b.total < run.rows.length) { run.rows = []; return true; } // file rewritten (a resume): reload all
      if (b.rows.length) { run.rows = run.rows.concat(b.rows); return true; }
      return false;
    });
  }
  var firstPoll = true;
  function poll() {
    Promise.all(S.runs.map(pollRun)).then(function (changed) {
      if (firstPoll || changed.some(Boolean)) renderCharts();
      firstPoll = false;
    }).catch(function (e) { $("status").textContent = "metrics: " + e.message; })
      .then(function () { setTimeout(poll, 2000); });
  }
  function initCharts() {
    renderRunLegend();
    $("smooth").addEventListener("input", function () {
      C.smooth = Number($("smooth").value);
      $("smooth-value").textContent = C.smooth.toFixed(2);
      resmooth();
    });
  }
`;
