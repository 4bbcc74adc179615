// The metrics section's data, drawn by charts.js: each run's metric rows flattened into series per
// metric (a series per run and role), grouped by kind (eval first, timings last), metrics flat over
// the whole run found as constants, charts that repeat another found by their values, which y axes
// are bounded at [0, 1], and the debiased EMA that smooths them. No drawing here.
import { S } from "./common.js";

/** @typedef {import("./api.js").MetricsRow} MetricsRow */
/** A run's (run index) series of one role ("" outside roles): value by step. @typedef {{ run: number, role: string, values: Record<string, number> }} Series */
/** One metric: its series by id ("<run>|<role>") and notes shown under its chart. @typedef {{ series: Record<string, Series>, notes: string[] }} Metric */

// what says whether training helps comes first: the held-out metric, then the rewards (total, by
// reward name, by kind) and the judges behind them; wall-clock figures last
export const KINDS = ["eval", "rewards", "policy", "lengths", "other", "timing"];
const ORDER = [
  "eval.metric",
  "eval",
  "reward.total",
  "reward.byName",
  "reward",
  "formatFailureRate",
  "judges",
  "loss",
  "entropy",
  "kl",
  "approxKl",
  "clipFrac",
  "gradNorm",
  "advantage",
  "value",
  "length",
  "outputLength",
  "promptLength",
  "tokens",
  "timings.stepMs",
  "timings",
];
// metrics that repeat another of the same row: dropped where the other is present (older runs wrote both)
/** @type {Record<string, string>} */
const ALIASES = { "length.prompt": "promptLength" };
const SKIP = new Set(["step", "time", "roles", "warnings"]);
// a value equal to the first to this relative precision counts as the same (whitened advantage.std is 1 to float precision)
const SAME = 1e-6;

/** @param {string} key */
export function kindOf(key) {
  // judges.<rule>.*: how far the judge's verdicts, which are rewards, can be trusted
  if (/^(reward|formatFailure|judges\.)/.test(key)) return "rewards";
  if (/^eval/.test(key)) return "eval";
  if (/^timings\.|Ms$|PerSecond$/.test(key)) return "timing";
  if (/[lL]ength|[tT]okens/.test(key)) return "lengths";
  if (/^(entropy|kl|approxKl|clipFrac|gradNorm|advantage|value|loss|lr|updated|skippedMinibatches)/.test(key)) return "policy";
  return "other";
}
/** @param {string} key */
export function rank(key) {
  for (let i = 0; i < ORDER.length; i++) if (key === ORDER[i] || key.indexOf(ORDER[i] + ".") === 0 || key.indexOf(ORDER[i]) === 0) return i;
  return ORDER.length;
}
/**
 * The finite numbers of `obj` by dotted path (top-level step, time, roles and warnings left out).
 * @param {Record<string, unknown>} obj
 * @param {string} prefix
 * @param {Record<string, number>} out
 */
function flatten(obj, prefix, out) {
  for (const k in obj) {
    if (!prefix && SKIP.has(k)) continue;
    const v = obj[k];
    if (typeof v === "number" && Number.isFinite(v)) out[prefix + k] = v;
    else if (v && typeof v === "object" && !Array.isArray(v)) flatten(/** @type {Record<string, unknown>} */ (v), prefix + k + ".", out);
  }
  return out;
}
/** @param {Record<string, number>} f */
function dropAliases(f) {
  for (const a in ALIASES) if (a in f && ALIASES[a] in f) delete f[a];
  return f;
}
// [0, 1] by definition, read from the name: shares and rates (the last part ends in Rate, Frac,
// Fraction or Share: formatFailureRate, clipFrac, passRate; a judge's agreement is a share too) and
// 0/1 flags; per-second and learning rates are not
const FLAGS = new Set(["updated", "agreement"]);
/** @param {string} key */
function boundedByName(key) {
  const last = key.slice(key.lastIndexOf(".") + 1);
  if (FLAGS.has(last)) return true;
  return /(rate|frac|fraction|share)$/i.test(last) && !/^(lr|learningrate)$/i.test(last);
}
// eval.metric is whatever the eval's metric returns, a judge's meanScore whatever its range allows
// (any finite numbers): [0, 1] while every value lies there
const BOUNDED_BY_DATA = /^(eval\.metric|judges\..+\.meanScore)$/;
/** Whether the chart of `key` keeps its y axis at [0, 1]. @param {string} key @param {Metric} m */
export function bounded(key, m) {
  if (!BOUNDED_BY_DATA.test(key)) return boundedByName(key);
  for (const id in m.series)
    for (const s in m.series[id].values) {
      const v = m.series[id].values[s];
      if (v < 0 || v > 1) return false;
    }
  return true;
}

/**
 * Every run's metrics by key, the eval before training included: a step-0 row, else summary.json's
 * before, else a note saying so.
 * @returns {Record<string, Metric>}
 */
export function metricTable() {
  /** @type {Record<string, Metric>} */
  const t = {};
  /** @param {string} key @param {number} run @param {string} role */
  const series = (key, run, role) => {
    const k = t[key] || (t[key] = { series: {}, notes: [] });
    const id = run + "|" + role;
    return k.series[id] || (k.series[id] = { run, role, values: {} });
  };
  for (const run of S.runs)
    for (const row of run.rows) {
      if (typeof row.step !== "number" || !Number.isFinite(row.step)) continue;
      const glob = dropAliases(flatten(row, "", {}));
      for (const k in glob) series(k, run.index, "").values[row.step] = glob[k];
      const roles = row.roles || {};
      for (const role in roles) {
        const f = dropAliases(flatten(roles[role], "", {}));
        for (const k in f) series(k, run.index, role).values[row.step] = f[k];
      }
    }
  for (const run of S.runs) {
    const ov = run.info?.overview;
    const has = t["eval.metric"]?.series[run.index + "|"];
    if (!has && !ov?.before) continue;
    const s = series("eval.metric", run.index, "");
    const who = S.runs.length > 1 ? run.label + ": " : "";
    if (s.values[0] !== undefined) continue;
    if (ov?.before) {
      s.values[0] = ov.before.metric;
      t["eval.metric"].notes.push(who + "step 0 from summary.json before");
    } else t["eval.metric"].notes.push(who + "no step-0 eval");
  }
  return t;
}
/**
 * A metric is constant when every series holds one value (to SAME) over at least two steps (the
 * eval metric always charts): then its value per series id, else null.
 * @param {string} key
 * @param {Metric} m
 */
export function constantOf(key, m) {
  if (key === "eval.metric") return null;
  const ids = Object.keys(m.series);
  let points = 0;
  /** @type {{ id: string, v: number | null }[]} */
  const vals = [];
  for (const id of ids) {
    const v = m.series[id].values;
    /** @type {number | null} */
    let first = null;
    let n = 0;
    for (const s in v) {
      if (first === null) first = v[s];
      else if (Math.abs(v[s] - first) > SAME * Math.max(1, Math.abs(first))) return null;
      n++;
    }
    points = Math.max(points, n);
    vals.push({ id, v: first });
  }
  return points >= 2 ? vals : null;
}
/**
 * The series ids and every value, to tell a chart that repeats another.
 * @param {Metric} m
 */
export function valuesSig(m) {
  return Object.keys(m.series)
    .sort()
    .map((id) => {
      const v = m.series[id].values;
      const steps = Object.keys(v).sort((a, b) => Number(a) - Number(b));
      return id + ":" + steps.map((s) => s + "=" + v[s].toPrecision(12)).join(";");
    })
    .join("/");
}
/**
 * Debiased exponential moving average with weight `w` (0: the values as they are); gaps stay gaps.
 * @param {(number | null)[]} arr
 * @param {number} w
 */
export function ema(arr, w) {
  if (!w) return arr.slice();
  /** @type {(number | null)[]} */
  const out = [];
  let last = 0;
  let n = 0;
  for (const v of arr) {
    if (v === null) {
      out.push(null);
      continue;
    }
    last = last * w + (1 - w) * v;
    n++;
    out.push(last / (1 - w ** n));
  }
  return out;
}
