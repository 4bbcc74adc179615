// One record of the episode the viewer shows: prompt, output, parsed value, tool calls (inputs and
// results as readable text or indented JSON), rewards and the judge calls that scored it. Draws
// into #record only; which record is shown is the viewer's.
import { $, code, el, json, readable } from "./common.js";

/** @typedef {import("./api.js").StepRecord} StepRecord */
/** @typedef {import("./api.js").ToolCallRecord} ToolCallRecord */
/** @typedef {import("./api.js").EpisodeAnswer} Shown the loaded episode: trajectory, rewards, skipped records */

/** @param {string} title @param {HTMLElement} node */
function part(title, node) {
  return [el("h4", { text: title }), node];
}
/** @param {ToolCallRecord[]} results */
function toolTable(results) {
  const head = el(
    "tr",
    {},
    ["tool", "input", "result", "ms"].map((h) => el("th", { text: h })),
  );
  const rows = results.map((t) => {
    const result = t.ok ? readable(t.value) : (t.timedOut ? "timed out: " : "error: ") + t.error;
    return el("tr", {}, [
      el("td", { text: t.tool }),
      el("td", {}, [code(readable(t.input), { "data-testid": "tool-input" })]),
      el("td", { cls: t.ok ? "" : "bad" }, [code(result, { "data-testid": "tool-result" })]),
      el("td", { text: String(Math.round(t.ms)) }),
    ]);
  });
  return el("table", { "data-testid": "record-tools" }, [head, ...rows]);
}
/** @param {number | number[] | undefined} v */
function rewardText(v) {
  if (Array.isArray(v)) return "per token: " + v.map((x) => x.toFixed(3)).join(" ");
  return String(Number(v?.toFixed ? v.toFixed(6) : v));
}
/** @param {Shown} e @param {StepRecord} r */
function rewardPart(e, r) {
  const rw = e.rewards.findLast((x) => x.recordIndex === r.index);
  const sk = e.skipped.findLast((x) => x.recordIndex === r.index);
  if (!rw) {
    const text = sk ? "skipped: " + sk.reasons.join("; ") : r.sampleHandle ? "no reward recorded" : "not trainable (no sample)";
    return el("div", { cls: "empty", "data-testid": "record-rewards", text });
  }
  /** @param {string} what @param {string} name @param {number | number[] | undefined} v */
  const row = (what, name, v) =>
    el("tr", what === "total" ? { cls: "total" } : {}, [
      el("td", { text: what }),
      el("td", { text: name }),
      el("td", { text: rewardText(v) }),
    ]);
  const rows = [row("total", "", rw.value)];
  for (const [k, v] of Object.entries(rw.byKind)) rows.push(row("kind", k, v));
  for (const [k, v] of Object.entries(rw.bySource)) rows.push(row("function", k, v));
  const head = el(
    "tr",
    {},
    ["", "name", "value"].map((h) => el("th", { text: h })),
  );
  return el("table", { "data-testid": "record-rewards" }, [head, ...rows]);
}
/**
 * Did the rule named `name` reward or skip this record? An episode left out of training has neither:
 * then every trainable record counts.
 * @param {Shown} e @param {string} name @param {StepRecord} r
 */
function ruleCovers(e, name, r) {
  const rw = e.rewards.find((x) => x.recordIndex === r.index);
  const sk = e.skipped.find((x) => x.recordIndex === r.index);
  if (!rw && !sk) return r.sampleHandle !== null && e.rewards.length === 0 && e.skipped.length === 0;
  return (rw && rw.bySource[name] !== undefined) || (sk?.reasons.some((x) => x.indexOf(name + ": ") === 0) ?? false);
}
/**
 * The judge calls that scored this record: its own (mode "record") or its episode's, where the rule rewarded it.
 * @param {Shown} e @param {StepRecord} r
 */
function judgePart(e, r) {
  const mine = (e.trajectory.judgements || []).filter((j) => (j.mode === "record" ? j.recordIndex === r.index : ruleCovers(e, j.rule, r)));
  if (!mine.length) return [];
  const calls = mine.map((j) => {
    const where = j.group ? " · group " + j.group.key + ", candidate " + (j.group.position + 1) + " of " + j.group.size : "";
    const verdict = j.score !== null ? "score " + j.score : "failed: " + j.error;
    const head =
      j.rule +
      " · " +
      j.judge +
      " · " +
      j.mode +
      where +
      " · " +
      verdict +
      (j.cached ? " · cached" : "") +
      (j.metric !== null ? " · metric " + j.metric : "");
    const input = typeof j.input === "string" ? j.input : j.input.map((m) => m.role + ": " + m.content).join("\n\n");
    return el("details", { cls: j.score !== null ? "" : "bad" }, [
      el("summary", { "data-testid": "judge-verdict", text: head }),
      el("h4", { text: "judge input" }),
      el("pre", { text: input }),
      el("h4", { text: "judge output" }),
      el("pre", { text: j.output === null ? "(none)" : j.output }),
    ]);
  });
  return part("Judged", el("div", { "data-testid": "record-judged" }, calls));
}
/** @param {StepRecord} r */
function recordMeta(r) {
  const branch = r.branch !== null ? " · branch " + r.branch : "";
  const tokens = r.promptTokens !== null ? " · " + r.promptTokens + " prompt / " + r.outputTokens + " output tokens" : "";
  return (
    "role " +
    (r.role || "-") +
    " · model " +
    (r.model || "-") +
    " · turn " +
    r.turn +
    " · visit " +
    (r.visit + 1) +
    branch +
    " · " +
    Math.round(r.ms * 10) / 10 +
    " ms" +
    tokens
  );
}
/** @param {StepRecord} r */
function promptNode(r) {
  const prompt = r.prompt;
  if (prompt === null) return null;
  const p =
    typeof prompt === "string"
      ? el("pre", { text: prompt })
      : el(
          "div",
          {},
          prompt.map((m) => el("div", { cls: "msg" }, [el("b", { text: m.role }), el("pre", { text: m.content })])),
        );
  p.setAttribute("data-testid", "record-prompt");
  return p;
}

/**
 * Draws record `rec` of the shown episode into #record.
 * @param {Shown} e
 * @param {number} rec
 */
export function renderRecord(e, rec) {
  const traj = e.trajectory;
  const r = traj.records[rec];
  const box = $("record");
  box.textContent = "";
  box.appendChild(
    el("h3", { "data-testid": "record-title", text: rec + 1 + " / " + traj.records.length + ": " + r.node + " (" + r.kind + ")" }),
  );
  box.appendChild(el("div", { cls: "meta", text: recordMeta(r) }));
  if (traj.error && rec === traj.records.length - 1)
    box.appendChild(el("div", { cls: "bad", text: "episode failed: " + traj.error.code + ": " + traj.error.message }));
  /** @type {HTMLElement[]} */
  const parts = [];
  const prompt = promptNode(r);
  if (prompt) parts.push(...part("Prompt", prompt));
  if (r.rawOutput !== null) parts.push(...part("Output", el("pre", { "data-testid": "record-output", text: r.rawOutput })));
  if (r.parsed !== null)
    parts.push(
      ...part(
        "Parsed",
        r.parsed.ok
          ? code(json(r.parsed.value), { "data-testid": "record-parsed", cls: "good" })
          : code("format failure: " + r.parsed.reason + "\nfallback: " + json(r.parsed.fallback), {
              "data-testid": "record-parsed",
              cls: "bad",
            }),
      ),
    );
  if (r.toolResults.length) parts.push(...part("Tool calls", toolTable(r.toolResults)));
  parts.push(...part("Rewards", rewardPart(e, r)));
  parts.push(...judgePart(e, r));
  if (r.kind !== "role") parts.push(...part("Node output", code(readable(r.output))));
  parts.push(el("details", {}, [el("summary", { text: "state before" }), code(json(r.stateBefore))]));
  for (const n of parts) box.appendChild(n);
}
