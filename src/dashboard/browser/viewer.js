// The trajectory viewer: picks a run and step, filters the step's episodes (task/episode id, reward
// range, status), steps through a task group's siblings and through the records of the episode
// shown, which graph.js (its path) and record.js (one record) draw.
import { $, $as, $input, $select, el, getJson, S } from "./common.js";
import { renderGraph } from "./graph.js";
import { renderRecord } from "./record.js";

/** @typedef {import("./api.js").EpisodeSummary} EpisodeSummary */
/** @typedef {import("./api.js").EpisodeAnswer} EpisodeAnswer */

/**
 * The run and its step's episodes, the chosen episode id, the one loaded (or loading), and the
 * loaded episode with the record shown.
 * @type {{ run: number, episodes: EpisodeSummary[], current: string | null, loaded: string | null, shown: EpisodeAnswer | null, rec: number }}
 */
const view = { run: 0, episodes: [], current: null, loaded: null, shown: null, rec: 0 };
const q = () => "?run=" + view.run;
/** @param {Error} e */
const report = (e) => {
  $("status").textContent = e.message;
};

function loadSteps() {
  getJson("/api/steps" + q())
    .then((/** @type {import("./api.js").StepsAnswer} */ b) => {
      const sel = $select("step-select");
      const had = sel.value;
      sel.textContent = "";
      if (!b.steps.length) {
        sel.appendChild(el("option", { value: "", text: "no trajectories" }));
        return;
      }
      for (const s of b.steps) sel.appendChild(el("option", { value: String(s), text: "step " + s }));
      sel.value = had && b.steps.indexOf(Number(had)) >= 0 ? had : String(b.steps[b.steps.length - 1]);
      if (sel.value !== had) loadEpisodes();
    })
    .catch(report);
}
// The pick is cleared when the step changes, not when its list arrives: an episode picked while the
// list loads stays picked, and a list that arrives after a later step was chosen is dropped.
function loadEpisodes() {
  const step = $select("step-select").value;
  if (!step) return;
  view.current = null;
  view.loaded = null;
  getJson("/api/steps/" + step + "/episodes" + q())
    .then((/** @type {{ episodes: EpisodeSummary[] }} */ b) => {
      if ($select("step-select").value !== step) return;
      view.episodes = b.episodes;
      applyFilter();
    })
    .catch(report);
}
/** @param {EpisodeSummary} e */
function matches(e) {
  const text = $input("ep-search").value.trim().toLowerCase();
  const min = Number.parseFloat($input("ep-min").value);
  const max = Number.parseFloat($input("ep-max").value);
  const st = $select("ep-status").value;
  if (text && (e.episodeId + " " + (e.taskId || "")).toLowerCase().indexOf(text) < 0) return false;
  if (!Number.isNaN(min) && (e.reward === null || e.reward < min)) return false;
  if (!Number.isNaN(max) && (e.reward === null || e.reward > max)) return false;
  if (st === "ok" && e.status !== "done") return false;
  if (st === "failed" && e.status !== "error") return false;
  if (st === "step_limit" && e.status !== "step_limit") return false;
  return true;
}
/** @param {EpisodeSummary} e */
function episodeText(e) {
  const r = e.reward === null ? "" : " · reward " + Number(e.reward).toFixed(3);
  return e.episodeId + (e.taskId ? " · " + e.taskId : "") + " · " + e.status + " · " + e.records + " records" + r;
}
const currentEpisode = () => view.episodes.find((e) => e.episodeId === view.current);
// the select lists the episodes that pass the filters, plus the one shown when a sibling step reached a hidden one
function fillEpisodes() {
  const shown = view.episodes.filter(matches);
  const sel = $select("episode-select");
  $("ep-count").textContent = shown.length + " of " + view.episodes.length + " episodes";
  sel.textContent = "";
  const list = shown.slice();
  const cur = currentEpisode();
  if (cur && shown.indexOf(cur) < 0) list.unshift(cur);
  for (const e of list)
    sel.appendChild(el("option", { value: e.episodeId, text: episodeText(e) + (shown.indexOf(e) < 0 ? " (hidden by filters)" : "") }));
  if (view.current) sel.value = view.current;
  renderSiblings();
}
function applyFilter() {
  const shown = view.episodes.filter(matches);
  if (!shown.some((e) => e.episodeId === view.current)) view.current = shown.length ? shown[0].episodeId : null;
  fillEpisodes();
  if (!view.current) {
    $("viewer").hidden = true;
    view.loaded = null;
    return;
  }
  if (view.current !== view.loaded) loadEpisode();
}
/** The current episode's task group (episodes with its task id), and where it stands in it. */
function group() {
  const cur = currentEpisode();
  if (!cur) return { list: [], at: -1, task: null };
  const list = cur.taskId === null ? [cur] : view.episodes.filter((e) => e.taskId === cur.taskId);
  return { list, at: list.indexOf(cur), task: cur.taskId };
}
function renderSiblings() {
  const g = group();
  $("sib-info").textContent =
    g.at < 0 ? "" : (g.task === null ? "no task id" : "task " + g.task) + " · " + (g.at + 1) + " of " + g.list.length;
  $as("sib-prev", HTMLButtonElement).disabled = g.at <= 0;
  $as("sib-next", HTMLButtonElement).disabled = g.at < 0 || g.at >= g.list.length - 1;
}
/** @param {number} d */
function sibling(d) {
  const g = group();
  const to = g.list[g.at + d];
  if (!to) return;
  view.current = to.episodeId;
  fillEpisodes();
  loadEpisode();
}
function loadEpisode() {
  const step = $select("step-select").value;
  const ep = view.current;
  view.loaded = ep;
  if (ep === null) return;
  getJson("/api/steps/" + step + "/episodes/" + encodeURIComponent(ep) + q())
    .then((/** @type {EpisodeAnswer} */ b) => {
      if (view.loaded !== ep) return; // a later pick won
      view.shown = b;
      view.rec = 0;
      // which step's episode is on screen, for whoever must wait until a pick has loaded
      $("viewer").dataset.shown = step + "/" + ep;
      $("viewer").hidden = false;
      renderShown(b);
    })
    .catch(report);
}
/** @param {EpisodeAnswer} e */
function renderShown(e) {
  renderList(e);
  renderGraph(e.trajectory.records, view.rec, selectRecord);
  renderRecord(e, view.rec);
}
/** @param {number} i */
function selectRecord(i) {
  if (!view.shown) return;
  view.rec = Math.max(0, Math.min(view.shown.trajectory.records.length - 1, i));
  renderShown(view.shown);
}
/** @param {EpisodeAnswer} e */
function renderList(e) {
  const ol = $("record-list");
  ol.textContent = "";
  e.trajectory.records.forEach((r, i) => {
    const text = i + 1 + ". " + r.node + " (visit " + (r.visit + 1) + (r.turn ? ", turn " + r.turn : "") + ")";
    ol.appendChild(el("li", { cls: i === view.rec ? "active" : "", "data-testid": "record-item", onclick: () => selectRecord(i) }, [text]));
  });
}

/** Fills the run picker, wires the controls and the arrow keys, and follows the run's steps. */
export function initViewer() {
  const runSel = $select("run-select");
  for (const r of S.runs) runSel.appendChild(el("option", { value: String(r.index), text: r.label }));
  $("run-pick").hidden = S.runs.length < 2;
  runSel.addEventListener("change", () => {
    view.run = Number(runSel.value);
    $select("step-select").value = "";
    loadSteps();
  });
  $("step-select").addEventListener("change", loadEpisodes);
  $("episode-select").addEventListener("change", () => {
    view.current = $select("episode-select").value;
    fillEpisodes();
    loadEpisode();
  });
  for (const id of ["ep-search", "ep-min", "ep-max"]) $(id).addEventListener("input", applyFilter);
  $("ep-status").addEventListener("change", applyFilter);
  $("sib-prev").addEventListener("click", () => sibling(-1));
  $("sib-next").addEventListener("click", () => sibling(1));
  $("prev").addEventListener("click", () => selectRecord(view.rec - 1));
  $("next").addEventListener("click", () => selectRecord(view.rec + 1));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLElement && /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
    if (e.key === "ArrowLeft") selectRecord(view.rec - 1);
    if (e.key === "ArrowRight") selectRecord(view.rec + 1);
  });
  loadSteps();
  setInterval(loadSteps, 5000);
}
