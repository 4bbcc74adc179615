// The run summary panel: a column per run (state, steps, wall time, eval before and after, best,
// checkpoints, cast), the config differences of overlaid runs, and the list of the runs' warnings.
import { $, el, fmtNum, fmtSeconds, S } from "./common.js";

/** @typedef {import("./api.js").Run} Run */
/** @typedef {Run & { info: import("./api.js").RunInfo }} InfoRun */
/** @typedef {import("./api.js").RunInfo["overview"]} Overview */

/** @type {[string, (o: Overview, r: InfoRun) => string][]} */
const SUMMARY_ROWS = [
  ["name", (o) => o.name || "–"],
  ["state", (o) => (o.finished ? "finished" + (o.kind ? " (" + o.kind + ")" : "") : "running or stopped (no summary.json)")],
  ["steps", (o) => (o.lastStep === null ? "–" : o.lastStep) + (o.steps !== null ? " / " + o.steps : "")],
  ["wall time", (o) => fmtSeconds(o.wallSeconds)],
  [
    "eval before",
    (o) => (o.before ? fmtNum(o.before.metric) + (o.before.source === "summary" ? " (summary.json)" : " (step 0)") : "no step-0 eval"),
  ],
  ["eval after", evalAfter],
  ["best", (o) => (o.best ? "step " + o.best.step + " (" + fmtNum(o.best.metric) + ")" : "–")],
  ["checkpoints", (_o, r) => r.info.checkpoints.join(", ") || "none"],
  [
    "cast",
    (o) =>
      Object.keys(o.cast)
        .map((role) => role + " → " + o.cast[role])
        .join("\n") || "–",
  ],
];
/** @param {Overview} o */
function evalAfter(o) {
  if (!o.after) return "–";
  const delta = o.before ? ", Δ " + (o.after.metric >= o.before.metric ? "+" : "") + fmtNum(o.after.metric - o.before.metric) : "";
  return fmtNum(o.after.metric) + (o.after.step !== null ? " (step " + o.after.step + ")" : "") + delta;
}

/** Fills #summary: a row per fact, a column per run whose info has arrived. */
export function renderSummary() {
  const box = $("summary");
  box.textContent = "";
  box.className = "";
  const runs = S.runs.filter(/** @returns {r is InfoRun} */ (r) => r.info !== null);
  const head = el("tr", {}, [el("th", { text: "" }), ...runs.map((r) => el("th", { title: r.runDir, text: r.label }))]);
  const table = el("table", { cls: "summary" }, [head]);
  for (const [name, text] of SUMMARY_ROWS) {
    const cells = runs.map((r) => {
      const td = el("td", { text: text(r.info.overview, r) });
      td.style.whiteSpace = "pre-line";
      return td;
    });
    table.appendChild(el("tr", { "data-row": name }, [el("th", { text: name }), ...cells]));
  }
  box.appendChild(table);
}

/**
 * Config fields that differ between overlaid runs (from /api/config-diff): path, then a value per run.
 * @param {import("./api.js").ConfigDifferences} b
 */
export function renderConfigDiff(b) {
  const box = $("config-diff");
  box.textContent = "";
  box.hidden = S.runs.length < 2;
  if (box.hidden) return;
  box.appendChild(el("h3", { text: "config differences" }));
  const none = b.missing.map((i) => S.runs[i].label);
  if (none.length) box.appendChild(el("div", { cls: "note", text: "no config.json: " + none.join(", ") }));
  if (!b.differences.length) {
    box.appendChild(el("div", { cls: "empty", text: "none: every config.json holds the same fields and values" }));
    return;
  }
  const head = el("tr", {}, [el("th", { text: "field" }), ...S.runs.map((r) => el("th", { title: r.runDir, text: r.label }))]);
  const table = el("table", { cls: "summary" }, [head]);
  for (const d of b.differences)
    table.appendChild(
      el("tr", { "data-path": d.path }, [el("th", { text: d.path }), ...d.values.map((v) => el("td", { text: v === null ? "–" : v }))]),
    );
  box.appendChild(table);
  if (b.more) box.appendChild(el("div", { cls: "note", text: "… " + b.more + " more" }));
}

// the runs' warnings (a row's warnings: { code, role?, message, hint }), one line per run, code and role,
// with the steps it came up at and its latest message; whatever the code, so new kinds show as they come
const MAX_WARNINGS = 30;
/** @typedef {{ run: Run, code: string, role: string, steps: number[], message: string, hint: string }} WarningGroup */
function warningGroups() {
  /** @type {WarningGroup[]} */
  const groups = [];
  /** @type {Record<string, WarningGroup>} */
  const byKey = {};
  for (const run of S.runs)
    for (const row of run.rows) {
      if (!Array.isArray(row.warnings)) continue;
      for (const w of row.warnings) {
        if (!w || typeof w !== "object") continue;
        const code = typeof w.code === "string" ? w.code : "WARNING";
        const role = typeof w.role === "string" ? w.role : "";
        const k = run.index + "|" + code + "|" + role;
        let g = byKey[k];
        if (!g) groups.push((g = byKey[k] = { run, code, role, steps: [], message: "", hint: "" }));
        if (g.steps[g.steps.length - 1] !== row.step) g.steps.push(row.step);
        // the steps are listed once: a message's own "step N: " would repeat them
        g.message = typeof w.message === "string" ? w.message.replace(/^step \d+: /, "") : "";
        g.hint = typeof w.hint === "string" ? w.hint : "";
      }
    }
  return groups;
}
/**
 * [1, 2, 3, 5] -> "1–3, 5"; a long list keeps its first and last ranges.
 * @param {number[]} steps
 */
function stepRanges(steps) {
  const out = [];
  let i = 0;
  while (i < steps.length) {
    let j = i;
    while (j + 1 < steps.length && steps[j + 1] === steps[j] + 1) j++;
    out.push(j > i ? steps[i] + "–" + steps[j] : String(steps[i]));
    i = j + 1;
  }
  return out.length > 10 ? out.slice(0, 5).join(", ") + ", …, " + out.slice(-3).join(", ") : out.join(", ");
}
/** Fills #warnings from every run's metric rows (hidden when there are none). */
export function renderWarnings() {
  const box = $("warnings");
  const groups = warningGroups();
  box.textContent = "";
  box.hidden = !groups.length;
  if (!groups.length) return;
  box.appendChild(el("h3", { text: "warnings" }));
  const list = el("ul", {});
  for (const g of groups.slice(0, MAX_WARNINGS)) {
    const who = (S.runs.length > 1 ? g.run.label + " · " : "") + g.code + (g.role ? " · " + g.role : "");
    const many = g.steps.length > 1;
    const when = (many ? "steps " : "step ") + stepRanges(g.steps) + (many ? " (" + g.steps.length + "×)" : "");
    list.appendChild(
      el("li", { "data-code": g.code }, [
        el("b", { text: who }),
        " " + when + ": " + g.message,
        g.hint ? el("div", { cls: "hint", text: g.hint }) : null,
      ]),
    );
  }
  if (groups.length > MAX_WARNINGS) list.appendChild(el("li", { text: "… " + (groups.length - MAX_WARNINGS) + " more" }));
  box.appendChild(list);
}
