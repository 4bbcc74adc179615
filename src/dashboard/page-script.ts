// The dashboard page's browser script, as a string served inline (no build step). It polls the
// JSON API for new metric lines, draws per-role uPlot charts and runs the trajectory viewer.
// Browser-only code: it must not use Node APIs, and it writes text with textContent (no HTML injection).
export const PAGE_SCRIPT = String.raw`
(function () {
  "use strict";
  var PALETTE = ["#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f", "#475569"];
  var ORDER = ["reward", "loss", "evalLoss", "eval", "entropy", "kl", "approxKl", "clipFrac", "gradNorm", "advantage", "value", "length", "samples"];
  var SKIP = { step: 1, time: 1, roles: 1 };
  var S = { rows: [], charts: {}, traj: null, rewards: [], skipped: [], rec: 0 };

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
  function getJson(url) { return fetch(url).then(function (r) { return r.json().then(function (b) { if (!r.ok) throw new Error(b.error || r.statusText); return b; }); }); }

  // ---- metrics -------------------------------------------------------------------------------
  function flatten(obj, prefix, out) {
    for (var k in obj) {
      if (!prefix && SKIP[k]) continue;
      var v = obj[k];
      if (typeof v === "number" && isFinite(v)) out[prefix + k] = v;
      else if (v && typeof v === "object" && !Array.isArray(v)) flatten(v, prefix + k + ".", out);
    }
    return out;
  }
  function rank(key) {
    for (var i = 0; i < ORDER.length; i++) if (key === ORDER[i] || key.indexOf(ORDER[i]) === 0) return i;
    return ORDER.length;
  }
  function groups(rows) {
    var g = {};
    function put(key, series, step, v) { (g[key] = g[key] || {}); (g[key][series] = g[key][series] || {})[step] = v; }
    rows.forEach(function (row) {
      var glob = flatten(row, "", {});
      for (var k in glob) put(k, "run", row.step, glob[k]);
      var roles = row.roles || {};
      for (var role in roles) { var f = flatten(roles[role], "", {}); for (var k2 in f) put(k2, role, row.step, f[k2]); }
    });
    return g;
  }
  function renderCharts() {
    var box = $("charts");
    if (!S.rows.length) { box.textContent = "no metrics yet (waiting for metrics.jsonl)"; box.className = "empty"; return; }
    if (box.className === "empty") { box.textContent = ""; box.className = ""; }
    var g = groups(S.rows);
    var steps = S.rows.map(function (r) { return r.step; }).filter(function (s, i, a) { return a.indexOf(s) === i; }).sort(function (a, b) { return a - b; });
    Object.keys(g).sort(function (a, b) { return rank(a) - rank(b) || (a < b ? -1 : 1); }).forEach(function (key) {
      var names = Object.keys(g[key]).sort();
      var data = [steps].concat(names.map(function (n) { return steps.map(function (s) { var v = g[key][n][s]; return v === undefined ? null : v; }); }));
      var sig = names.join("|");
      var c = S.charts[key];
      if (c && c.sig === sig) { c.plot.setData(data); return; }
      if (c) { c.plot.destroy(); c.div.remove(); }
      var div = el("div", { cls: "chart", "data-metric": key }, [el("h3", { text: key })]);
      box.appendChild(div);
      var plot = new uPlot({
        width: 440, height: 200,
        scales: { x: { time: false } },
        legend: { live: false },
        series: [{ label: "step" }].concat(names.map(function (n, i) { return { label: n, stroke: PALETTE[i % PALETTE.length], width: 1.5, spanGaps: true, points: { show: steps.length < 40 } }; })),
      }, data, div);
      S.charts[key] = { sig: sig, plot: plot, div: div };
    });
    $("last-step").textContent = "step " + steps[steps.length - 1];
  }
  function poll() {
    getJson("/api/metrics?after=" + S.rows.length).then(function (b) {
      if (b.total < S.rows.length) { S.rows = []; return; } // file rewritten (a resume): reload all
      if (b.rows.length) { S.rows = S.rows.concat(b.rows); renderCharts(); }
      else if (!S.rows.length) renderCharts();
    }).catch(function (e) { $("status").textContent = "metrics: " + e.message; })
      .then(function () { setTimeout(poll, 2000); });
  }

  // ---- trajectories ----------------------------------------------------------------------------
  function loadSteps() {
    getJson("/api/steps").then(function (b) {
      var sel = $("step-select");
      var had = sel.value;
      sel.textContent = "";
      if (!b.steps.length) { sel.appendChild(el("option", { value: "", text: "no trajectories" })); return; }
      b.steps.forEach(function (s) { sel.appendChild(el("option", { value: String(s), text: "step " + s })); });
      sel.value = had && b.steps.indexOf(Number(had)) >= 0 ? had : String(b.steps[b.steps.length - 1]);
      if (sel.value !== had) loadEpisodes();
    });
  }
  function loadEpisodes() {
    var step = $("step-select").value;
    if (!step) return;
    getJson("/api/steps/" + step + "/episodes").then(function (b) {
      var sel = $("episode-select");
      sel.textContent = "";
      b.episodes.forEach(function (e) {
        var r = e.reward === null ? "" : " · reward " + Number(e.reward).toFixed(3);
        sel.appendChild(el("option", { value: e.episodeId, text: e.episodeId + (e.taskId ? " · " + e.taskId : "") + " · " + e.status + " · " + e.records + " records" + r }));
      });
      if (b.episodes.length) loadEpisode();
    });
  }
  function loadEpisode() {
    var step = $("step-select").value, ep = $("episode-select").value;
    getJson("/api/steps/" + step + "/episodes/" + encodeURIComponent(ep)).then(function (b) {
      S.traj = b.trajectory; S.rewards = b.rewards; S.skipped = b.skipped; S.rec = 0;
      $("viewer").hidden = false;
      renderList(); renderGraph(); renderRecord();
    }).catch(function (e) { $("status").textContent = e.message; });
  }
  function select(i) {
    if (!S.traj) return;
    S.rec = Math.max(0, Math.min(S.traj.records.length - 1, i));
    renderList(); renderGraph(); renderRecord();
  }
  function renderList() {
    var ol = $("record-list");
    ol.textContent = "";
    S.traj.records.forEach(function (r, i) {
      ol.appendChild(el("li", { cls: i === S.rec ? "active" : "", "data-testid": "record-item", onclick: function () { select(i); } },
        [(i + 1) + ". " + r.node + " (visit " + r.visit + (r.turn ? ", turn " + r.turn : "") + ")"]));
    });
  }
  function renderGraph() {
    var recs = S.traj.records, order = [], info = {};
    recs.forEach(function (r) {
      if (!info[r.node]) { info[r.node] = { kind: r.kind, role: r.role, visits: [] }; order.push(r.node); }
      info[r.node].visits.push(r.visit);
    });
    var W = 130, H = 46, GAP = 40, TOP = 70;
    var width = Math.max(400, order.length * (W + GAP) + GAP), height = TOP + H + 80;
    var pos = {};
    order.forEach(function (n, i) { pos[n] = GAP + i * (W + GAP); });
    var root = svg("svg", { width: width, height: height, "data-testid": "graph-svg" });
    root.appendChild(svg("defs", {})).appendChild(svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "6", markerHeight: "6", orient: "auto-start-reverse" })).appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", style: "fill:#9aa4b2;stroke:none" }));
    for (var i = 0; i + 1 < recs.length; i++) {
      var a = recs[i].node, b = recs[i + 1].node, x1 = pos[a] + W / 2, x2 = pos[b] + W / 2, d, lx, ly;
      var taken = i + 1 === S.rec;
      if (a === b) { d = "M" + (x1 - 15) + "," + TOP + " C" + (x1 - 30) + "," + (TOP - 45) + " " + (x1 + 30) + "," + (TOP - 45) + " " + (x1 + 15) + "," + TOP; lx = x1; ly = TOP - 38; }
      else if (x2 > x1) { var hgt = 18 + Math.min(40, (x2 - x1) / 8); d = "M" + (x1 + 10) + "," + TOP + " Q" + ((x1 + x2) / 2) + "," + (TOP - hgt * 2) + " " + (x2 - 10) + "," + TOP; lx = (x1 + x2) / 2; ly = TOP - hgt - 2; }
      else { var hb = 18 + Math.min(40, (x1 - x2) / 8), yb = TOP + H; d = "M" + (x1 - 10) + "," + yb + " Q" + ((x1 + x2) / 2) + "," + (yb + hb * 2) + " " + (x2 + 10) + "," + yb; lx = (x1 + x2) / 2; ly = yb + hb + 12; }
      root.appendChild(svg("path", { d: d, "marker-end": "url(#arrow)", class: taken ? "taken" : "" }));
      root.appendChild(svg("text", { x: lx, y: ly, class: "small" }, String(i + 1)));
    }
    var cur = recs[S.rec] && recs[S.rec].node;
    order.forEach(function (n) {
      var g = svg("g", { class: (n === cur ? "active " : "") + info[n].kind, "data-testid": "graph-node", "data-node": n, style: "cursor:pointer" });
      g.addEventListener("click", function () { for (var j = 0; j < recs.length; j++) if (recs[j].node === n) return select(j); });
      g.appendChild(svg("rect", { x: pos[n], y: TOP, width: W, height: H, rx: 6 }));
      g.appendChild(svg("text", { x: pos[n] + W / 2, y: TOP + 19 }, n));
      g.appendChild(svg("text", { x: pos[n] + W / 2, y: TOP + 36, class: "small" }, (info[n].role ? "role " + info[n].role : info[n].kind) + " · visits " + info[n].visits.join(",")));
      root.appendChild(g);
    });
    var box = $("graph");
    box.textContent = "";
    box.appendChild(root);
  }
  function section(title, node) { return [el("h4", { text: title }), node]; }
  function renderRecord() {
    var r = S.traj.records[S.rec], box = $("record");
    box.textContent = "";
    var head = (S.rec + 1) + " / " + S.traj.records.length + ": " + r.node + " (" + r.kind + ")";
    box.appendChild(el("h3", { "data-testid": "record-title", text: head }));
    box.appendChild(el("div", { cls: "meta", text: "role " + (r.role || "-") + " · model " + (r.model || "-") + " · turn " + r.turn + " · visit " + r.visit + (r.branch !== null ? " · branch " + r.branch : "") + " · " + (Math.round(r.ms * 10) / 10) + " ms" + (r.promptTokens !== null ? " · " + r.promptTokens + " prompt / " + r.outputTokens + " output tokens" : "") }));
    var parts = [];
    if (r.prompt !== null) {
      var p = typeof r.prompt === "string" ? el("pre", { text: r.prompt }) : el("div", {}, r.prompt.map(function (m) { return el("div", { cls: "msg" }, [el("b", { text: m.role }), el("pre", { text: m.content })]); }));
      p.setAttribute("data-testid", "record-prompt");
      parts = parts.concat(section("Prompt", p));
    }
    if (r.rawOutput !== null) parts = parts.concat(section("Output", el("pre", { "data-testid": "record-output", text: r.rawOutput })));
    if (r.parsed !== null) parts = parts.concat(section("Parsed", r.parsed.ok
      ? el("pre", { "data-testid": "record-parsed", cls: "good", text: json(r.parsed.value) })
      : el("pre", { "data-testid": "record-parsed", cls: "bad", text: "format failure: " + r.parsed.reason + "\nfallback: " + json(r.parsed.fallback) })));
    if (r.toolResults.length) parts = parts.concat(section("Tool results", el("table", { "data-testid": "record-tools" }, [el("tr", {}, ["tool", "input", "result", "ms"].map(function (h) { return el("th", { text: h }); }))].concat(r.toolResults.map(function (t) {
      return el("tr", {}, [el("td", { text: t.tool }), el("td", {}, [el("pre", { text: json(t.input) })]), el("td", { cls: t.ok ? "" : "bad" }, [el("pre", { text: t.ok ? json(t.value) : (t.timedOut ? "timed out: " : "error: ") + t.error })]), el("td", { text: String(Math.round(t.ms)) })]);
    })))));
    var rw = null, sk = null;
    S.rewards.forEach(function (e) { if (e.recordIndex === r.index) rw = e; });
    S.skipped.forEach(function (e) { if (e.recordIndex === r.index) sk = e; });
    var rrows = [];
    if (rw) {
      var fmt = function (v) { return Array.isArray(v) ? "per token: " + v.map(function (x) { return x.toFixed(3); }).join(" ") : String(Number(v.toFixed ? v.toFixed(6) : v)); };
      rrows.push(el("tr", { cls: "total" }, [el("td", { text: "total" }), el("td", { text: "" }), el("td", { text: fmt(rw.value) })]));
      Object.keys(rw.byKind).forEach(function (k) { rrows.push(el("tr", {}, [el("td", { text: "kind" }), el("td", { text: k }), el("td", { text: fmt(rw.byKind[k]) })])); });
      Object.keys(rw.bySource).forEach(function (k) { rrows.push(el("tr", {}, [el("td", { text: "function" }), el("td", { text: k }), el("td", { text: fmt(rw.bySource[k]) })])); });
    }
    parts = parts.concat(section("Rewards", rw
      ? el("table", { "data-testid": "record-rewards" }, [el("tr", {}, ["", "name", "value"].map(function (h) { return el("th", { text: h }); }))].concat(rrows))
      : el("div", { cls: "empty", "data-testid": "record-rewards", text: sk ? "skipped: " + sk.reasons.join("; ") : r.sampleHandle ? "no reward recorded" : "not trainable (no sample)" })));
    if (r.kind !== "role") parts = parts.concat(section("Node output", el("pre", { text: json(r.output) })));
    parts.push(el("details", {}, [el("summary", { text: "state before" }), el("pre", { text: json(r.stateBefore) })]));
    parts.forEach(function (n) { box.appendChild(n); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    getJson("/api/run").then(function (info) {
      var cfg = info.config || {};
      $("run-meta").textContent = (cfg.name || cfg.kind || "run") + " · " + info.runDir + " · checkpoints: " + (info.checkpoints.join(", ") || "none");
    });
    $("step-select").addEventListener("change", loadEpisodes);
    $("episode-select").addEventListener("change", loadEpisode);
    $("prev").addEventListener("click", function () { select(S.rec - 1); });
    $("next").addEventListener("click", function () { select(S.rec + 1); });
    document.addEventListener("keydown", function (e) { if (e.key === "ArrowLeft") select(S.rec - 1); if (e.key === "ArrowRight") select(S.rec + 1); });
    poll();
    loadSteps();
    setInterval(loadSteps, 5000);
  });
})();
`;
