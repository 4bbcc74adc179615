// The run summary's pipeline panel, for runs trained with asynchronous RL (rows with `pipeline`): per
// run, its last steps, each with the weights it trained on, the rollouts in flight beside it with the
// weights each reads, and each worker group's busy shares (timings.workers.<group>) as a bar. Hidden
// when no run has any.
import { $, el, PALETTE, S } from "./common.js";

/** @typedef {import("./api.js").MetricsRow} MetricsRow */
/** @typedef {{ weights: number, ahead: Record<string, number> }} Pipeline */

/**
 * The row's pipeline, when it holds a well-formed one.
 * @param {MetricsRow} row
 * @returns {Pipeline | null}
 */
function pipelineOf(row) {
  const p = /** @type {{ weights?: unknown, ahead?: unknown } | undefined} */ (row.pipeline);
  if (!p || typeof p.weights !== "number" || !p.ahead || typeof p.ahead !== "object") return null;
  return { weights: p.weights, ahead: /** @type {Record<string, number>} */ (p.ahead) };
}

/**
 * "4 ← 2, 5 ← 3": each rollout in flight while `step` trained, with the step whose weights it reads.
 * @param {number} step @param {Pipeline} p
 */
function inFlightText(step, p) {
  const ahead = Object.keys(p.ahead)
    .filter((k) => typeof p.ahead[k] === "number")
    .map((k) => step + Number(k) + " ← " + p.ahead[k]);
  return ahead.join(", ") || "none (drained)";
}

// one colour per operation, the same in every row
/** @type {Record<string, string>} */
const OP_COLORS = {
  generation: PALETTE[0],
  update: PALETTE[1],
  logprobs: PALETTE[2],
  advantages: PALETTE[4],
  rewards: PALETTE[5],
  rate: PALETTE[6],
};

/**
 * A bar of one group's shares (each `<op>Share`, then idle), the widths scaled to their sum when overlaps pass 1.
 * @param {string} group @param {Record<string, unknown>} shares
 */
function groupBar(group, shares) {
  const ops = Object.keys(shares)
    .filter((k) => /Share$/.test(k) && k !== "idleShare" && typeof shares[k] === "number" && Number(shares[k]) > 0.005)
    .sort((a, b) => Number(shares[b]) - Number(shares[a]));
  const idle = typeof shares.idleShare === "number" ? shares.idleShare : 0;
  const total = Math.max(1, ops.reduce((a, k) => a + Number(shares[k]), 0) + idle);
  /** @param {string} name @param {number} x @param {string} color */
  const part = (name, x, color) => {
    const span = el("span", { cls: "seg", "data-op": name, title: name + " " + Math.round(x * 100) + "%" });
    span.style.width = (100 * x) / total + "%";
    span.style.background = color;
    return span;
  };
  const parts = ops.map((k) => {
    const op = k.replace(/Share$/, "");
    return part(op, Number(shares[k]), OP_COLORS[op] || PALETTE[PALETTE.length - 1]);
  });
  parts.push(part("idle", idle, "#e5e7eb"));
  const label = ops
    .map((k) => k.replace(/Share$/, "") + " " + Math.round(Number(shares[k]) * 100) + "%")
    .concat(["idle " + Math.round(idle * 100) + "%"]);
  return el("div", { cls: "group", "data-group": group, "data-testid": "pipeline-busy" }, [
    el("div", { cls: "bar" }, parts),
    el("span", { text: label.join(" · ") }),
  ]);
}

const LAST_STEPS = 6;

/**
 * A run's table: its last steps with a pipeline, one row each (step, weights, rollouts in flight, a
 * bar per worker group).
 * @param {{ step: number, p: Pipeline, workers: Record<string, Record<string, unknown>> }[]} steps
 */
function runTable(steps) {
  const groups = [...new Set(steps.flatMap((s) => Object.keys(s.workers)))];
  const head = el("tr", {}, [
    el("th", { text: "step" }),
    el("th", { text: "trained on weights of" }),
    el("th", { text: "in flight: step ← weights of" }),
    ...groups.map((g) => el("th", { text: g + " busy" })),
  ]);
  const rows = steps.map(({ step, p, workers }) =>
    el("tr", { "data-step": step }, [
      el("td", { text: String(step) }),
      el("td", { "data-testid": "pipeline-weights", text: "step " + p.weights }),
      el("td", { "data-testid": "pipeline-in-flight", text: inFlightText(step, p) }),
      ...groups.map((g) => el("td", {}, [workers[g] ? groupBar(g, workers[g]) : "–"])),
    ]),
  );
  return el("table", { cls: "summary" }, [head, ...rows]);
}

/** Fills #pipeline from each run's last rows with a pipeline (hidden when no run has one). */
export function renderPipeline() {
  const box = $("pipeline");
  box.textContent = "";
  const runs = S.runs.flatMap((run) => {
    const steps = run.rows.flatMap((row) => {
      const p = pipelineOf(row);
      const timings = /** @type {{ workers?: Record<string, Record<string, unknown>> } | undefined} */ (row.timings);
      const workers = timings?.workers && typeof timings.workers === "object" ? timings.workers : {};
      return p ? [{ step: row.step, p, workers }] : [];
    });
    return steps.length ? [{ run, steps: steps.slice(-LAST_STEPS) }] : [];
  });
  box.hidden = !runs.length;
  if (!runs.length) return;
  box.appendChild(el("h3", { text: "pipeline (asynchronous RL)" }));
  for (const { run, steps } of runs)
    box.appendChild(
      el("div", { cls: "run", "data-run": run.label }, [S.runs.length > 1 ? el("b", { text: run.label }) : null, runTable(steps)]),
    );
}
