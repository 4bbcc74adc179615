// Browser script (a string, see page-script.ts): the trajectory viewer. Picks a run and step, filters
// the step's episodes (task/episode id, reward range, status), steps through a task group's
// siblings, and shows one episode: path graph, records, prompt, output, parsed value, tool calls
// (inputs and results as readable text or indented JSON), rewards.
export const VIEWER_SCRIPT = String.raw`
  // view: run, episodes of the step, the chosen episode id, the loaded one and its records
  S.view = { run: 0, episodes: [], current: null, loaded: null, traj: null, rewards: [], skipped: [], rec: 0 };
  function q() { return "?run=" + S.view.run; }

  function loadSteps() {
    getJson("/api/steps" + q()).then(function (b) {
      var sel = $("step-select"), had = sel.value;
      sel.textContent = "";
      if (!b.steps.length) { sel.appendChild(el("option", { value: "", text: "no trajectories" })); return; }
      b.steps.forEach(function (s) { sel.appendChild(el("option", { value: String(s), text: "step " + s })); });
      sel.value = had && b.steps.indexOf(Number(had)) >= 0 ? had : String(b.steps[b.steps.length - 1]);
      if (sel.value !== had) loadEpisodes();
    }).catch(function (e) { $("status").textContent = e.message; });
  }
  function loadEpisodes() {
    var step = $("step-select").value;
    if (!step) return;
    getJson("/api/steps/" + step + "/episodes" + q()).then(function (b) {
      S.view.episodes = b.episodes;
      S.view.current = null; S.view.loaded = null;
      applyFilter();
    }).catch(function (e) { $("status").textContent = e.message; });
  }
  function matches(e) {
    var text = $("ep-search").value.trim().toLowerCase(), min = parseFloat($("ep-min").value), max = parseFloat($("ep-max").value), st = $("ep-status").value;
    if (text && (e.episodeId + " " + (e.taskId || "")).toLowerCase().indexOf(text) < 0) return false;
    if (!isNaN(min) && (e.reward === null || e.reward < min)) return false;
    if (!isNaN(max) && (e.reward === null || e.reward > max)) return false;
    if (st === "ok" && e.status !== "done") return false;
    if (st === "failed" && e.status !== "error") return false;
    if (st === "step_limit" && e.status !== "step_limit") return false;
    return true;
  }
  function episodeText(e) {
    var r = e.reward === null ? "" : " · reward " + Number(e.reward).toFixed(3);
    return e.episodeId + (e.taskId ? " · " + e.taskId : "") + " · " + e.status + " · " + e.records + " records" + r;
  }
  // the select lists the episodes that pass the filters, plus the one shown when a sibling step reached a hidden one
  function fillEpisodes() {
    var v = S.view, shown = v.episodes.filter(matches), sel = $("episode-select");
    $("ep-count").textContent = shown.length + " of " + v.episodes.length + " episodes";
    sel.textContent = "";
    var list = shown.slice();
    var cur = v.episodes.filter(function (e) { return e.episodeId === v.current; })[0];
    if (cur && shown.indexOf(cur) < 0) list.unshift(cur);
    list.forEach(function (e) { sel.appendChild(el("option", { value: e.episodeId, text: episodeText(e) + (shown.indexOf(e) < 0 ? " (hidden by filters)" : "") })); });
    if (v.current) sel.value = v.current;
    renderSiblings();
  }
  function applyFilter() {
    var v = S.view, shown = v.episodes.filter(matches);
    if (!shown.some(function (e) { return e.episodeId === v.current; })) v.current = shown.length ? shown[0].episodeId : null;
    fillEpisodes();
    if (!v.current) { $("viewer").hidden = true; v.loaded = null; return; }
    if (v.current !== v.loaded) loadEpisode();
  }
  function group() {
    var v = S.view, cur = v.episodes.filter(function (e) { return e.episodeId === v.current; })[0];
    if (!cur) return { list: [], at: -1, task: null };
    var list = cur.taskId === null ? [cur] : v.episodes.filter(function (e) { return e.taskId === cur.taskId; });
    return { list: list, at: list.indexOf(cur), task: cur.taskId };
  }
  function renderSiblings() {
    var g = group();
    $("sib-info").textContent = g.at < 0 ? "" : (g.task === null ? "no task id" : "task " + g.task) + " · " + (g.at + 1) + " of " + g.list.length;
    $("sib-prev").disabled = g.at <= 0;
    $("sib-next").disabled = g.at < 0 || g.at >= g.list.length - 1;
  }
  function sibling(d) {
    var g = group(), to = g.list[g.at + d];
    if (!to) return;
    S.view.current = to.episodeId;
    fillEpisodes();
    loadEpisode();
  }
  function loadEpisode() {
    var v = S.view, step = $("step-select").value, ep = v.current;
    v.loaded = ep;
    getJson("/api/steps/" + step + "/episodes/" + encodeURIComponent(ep) + q()).then(function (b) {
      if (v.loaded !== ep) return; // a later pick won
      v.traj = b.trajectory; v.rewards = b.rewards; v.skipped = b.skipped; v.rec = 0;
      $("viewer").hidden = false;
      renderList(); renderGraph(); renderRecord();
    }).catch(function (e) { $("status").textContent = e.message; });
  }
  function selectRecord(i) {
    var v = S.view;
    if (!v.traj) return;
    v.rec = Math.max(0, Math.min(v.traj.records.length - 1, i));
    renderList(); renderGraph(); renderRecord();
  }
  function renderList() {
    var ol = $("record-list");
    ol.textContent = "";
    S.view.traj.records.forEach(function (r, i) {
      ol.appendChild(el("li", { cls: i === S.view.rec ? "active" : "", "data-testid": "record-item", onclick: function () { selectRecord(i); } },
        [(i + 1) + ". " + r.node + " (visit " + (r.visit + 1) + (r.turn ? ", turn " + r.turn : "") + ")"]));
    });
  }
  function part(title, node) { return [el("h4", { text: title }), node]; }
  function toolTable(results) {
    var head = el("tr", {}, ["tool", "input", "result", "ms"].map(function (h) { return el("th", { text: h }); }));
    return el("table", { "data-testid": "record-tools" }, [head].concat(results.map(function (t) {
      var result = t.ok ? readable(t.value) : (t.timedOut ? "timed out: " : "error: ") + t.error;
      return el("tr", {}, [
        el("td", { text: t.tool }),
        el("td", {}, [code(readable(t.input), { "data-testid": "tool-input" })]),
        el("td", { cls: t.ok ? "" : "bad" }, [code(result, { "data-testid": "tool-result" })]),
        el("td", { text: String(Math.round(t.ms)) }),
      ]);
    })));
  }
  function rewardPart(r) {
    var rw = null, sk = null;
    S.view.rewards.forEach(function (e) { if (e.recordIndex === r.index) rw = e; });
    S.view.skipped.forEach(function (e) { if (e.recordIndex === r.index) sk = e; });
    if (!rw) return el("div", { cls: "empty", "data-testid": "record-rewards", text: sk ? "skipped: " + sk.reasons.join("; ") : r.sampleHandle ? "no reward recorded" : "not trainable (no sample)" });
    var fmt = function (v) { return Array.isArray(v) ? "per token: " + v.map(function (x) { return x.toFixed(3); }).join(" ") : String(Number(v.toFixed ? v.toFixed(6) : v)); };
    var rows = [el("tr", { cls: "total" }, [el("td", { text: "total" }), el("td", { text: "" }), el("td", { text: fmt(rw.value) })])];
    Object.keys(rw.byKind).forEach(function (k) { rows.push(el("tr", {}, [el("td", { text: "kind" }), el("td", { text: k }), el("td", { text: fmt(rw.byKind[k]) })])); });
    Object.keys(rw.bySource).forEach(function (k) { rows.push(el("tr", {}, [el("td", { text: "function" }), el("td", { text: k }), el("td", { text: fmt(rw.bySource[k]) })])); });
    return el("table", { "data-testid": "record-rewards" }, [el("tr", {}, ["", "name", "value"].map(function (h) { return el("th", { text: h }); }))].concat(rows));
  }
  // did the rule named name reward or skip this record? An episode left out of training has neither: then every trainable record counts
  function ruleCovers(name, r) {
    var rw = S.view.rewards.filter(function (e) { return e.recordIndex === r.index; })[0];
    var sk = S.view.skipped.filter(function (e) { return e.recordIndex === r.index; })[0];
    if (!rw && !sk) return r.sampleHandle !== null && S.view.rewards.length === 0 && S.view.skipped.length === 0;
    return (rw && rw.bySource[name] !== undefined) || (sk && sk.reasons.some(function (x) { return x.indexOf(name + ": ") === 0; }));
  }
  // the judge calls that scored this record: its own (mode "record") or its episode's, where the rule rewarded it
  function judgePart(r) {
    var mine = (S.view.traj.judgements || []).filter(function (j) { return j.mode === "record" ? j.recordIndex === r.index : ruleCovers(j.rule, r); });
    if (!mine.length) return [];
    return part("Judged", el("div", { "data-testid": "record-judged" }, mine.map(function (j) {
      var where = j.group ? " · group " + j.group.key + ", candidate " + (j.group.position + 1) + " of " + j.group.size : "";
      var verdict = j.score !== null ? "score " + j.score : "failed: " + j.error;
      var head = j.rule + " · " + j.judge + " · " + j.mode + where + " · " + verdict + (j.cached ? " · cached" : "") + (j.metric !== null ? " · metric " + j.metric : "");
      var input = typeof j.input === "string" ? j.input : j.input.map(function (m) { return m.role + ": " + m.content; }).join("\n\n");
      return el("details", { cls: j.score !== null ? "" : "bad" }, [
        el("summary", { "data-testid": "judge-verdict", text: head }),
        el("h4", { text: "judge input" }), el("pre", { text: input }),
        el("h4", { text: "judge output" }), el("pre", { text: j.output === null ? "(none)" : j.output }),
      ]);
    })));
  }
  function renderRecord() {
    var v = S.view, r = v.traj.records[v.rec], box = $("record");
    box.textContent = "";
    box.appendChild(el("h3", { "data-testid": "record-title", text: (v.rec + 1) + " / " + v.traj.records.length + ": " + r.node + " (" + r.kind + ")" }));
    box.appendChild(el("div", { cls: "meta", text: "role " + (r.role || "-") + " · model " + (r.model || "-") + " · turn " + r.turn + " · visit " + (r.visit + 1) + (r.branch !== null ? " · branch " + r.branch : "") + " · " + (Math.round(r.ms * 10) / 10) + " ms" + (r.promptTokens !== null ? " · " + r.promptTokens + " prompt / " + r.outputTokens + " output tokens" : "") }));
    if (v.traj.error && v.rec === v.traj.records.length - 1) box.appendChild(el("div", { cls: "bad", text: "episode failed: " + v.traj.error.code + ": " + v.traj.error.message }));
    var parts = [];
    if (r.prompt !== null) {
      var p = typeof r.prompt === "string" ? el("pre", { text: r.prompt }) : el("div", {}, r.prompt.map(function (m) { return el("div", { cls: "msg" }, [el("b", { text: m.role }), el("pre", { text: m.content })]); }));
      p.setAttribute("data-testid", "record-prompt");
      parts = parts.concat(part("Prompt", p));
    }
    if (r.rawOutput !== null) parts = parts.concat(part("Output", el("pre", { "data-testid": "record-output", text: r.rawOutput })));
    if (r.parsed !== null) parts = parts.concat(part("Parsed", r.parsed.ok
      ? code(json(r.parsed.value), { "data-testid": "record-parsed", cls: "good" })
      : code("format failure: " + r.parsed.reason + "\nfallback: " + json(r.parsed.fallback), { "data-testid": "record-parsed", cls: "bad" })));
    if (r.toolResults.length) parts = parts.concat(part("Tool calls", toolTable(r.toolResults)));
    parts = parts.concat(part("Rewards", rewardPart(r)));
    parts = parts.concat(judgePart(r));
    if (r.kind !== "role") parts = parts.concat(part("Node output", code(readable(r.output))));
    parts.push(el("details", {}, [el("summary", { text: "state before" }), code(json(r.stateBefore))]));
    parts.forEach(function (n) { box.appendChild(n); });
  }

  function initViewer() {
    var runSel = $("run-select");
    S.runs.forEach(function (r) { runSel.appendChild(el("option", { value: String(r.index), text: r.label })); });
    $("run-pick").hidden = S.runs.length < 2;
    runSel.addEventListener("change", function () { S.view.run = Number(runSel.value); $("step-select").value = ""; loadSteps(); });
    $("step-select").addEventListener("change", loadEpisodes);
    $("episode-select").addEventListener("change", function () { S.view.current = $("episode-select").value; fillEpisodes(); loadEpisode(); });
    ["ep-search", "ep-min", "ep-max"].forEach(function (id) { $(id).addEventListener("input", applyFilter); });
    $("ep-status").addEventListener("change", applyFilter);
    $("sib-prev").addEventListener("click", function () { sibling(-1); });
    $("sib-next").addEventListener("click", function () { sibling(1); });
    $("prev").addEventListener("click", function () { selectRecord(S.view.rec - 1); });
    $("next").addEventListener("click", function () { selectRecord(S.view.rec + 1); });
    document.addEventListener("keydown", function (e) {
      if (e.target && /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
      if (e.key === "ArrowLeft") selectRecord(S.view.rec - 1);
      if (e.key === "ArrowRight") selectRecord(S.view.rec + 1);
    });
    loadSteps();
    setInterval(loadSteps, 5000);
  }
`;
