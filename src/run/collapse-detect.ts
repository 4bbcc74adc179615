// Early warnings that a role is collapsing, read from the per-role figures of the run's metrics rows:
// entropy far below the role's first, format failures jumping above the role's best, advantages all
// 0 step after step while other roles learn, KL to the reference or clip fraction out of range.
// Pure: it keeps a bounded summary per role, reads rows and decides nothing (collapse-watch.ts acts).
import type { CollapseSettings } from "../config/collapse-settings.js";
import type { MetricsRow, MetricValues } from "../progress/metrics-row.js";

export { COLLAPSE_DEFAULTS, type CollapseSettings } from "../config/collapse-settings.js";

export type CollapseCode = "ROLE_ENTROPY_COLLAPSE" | "ROLE_FORMAT_RISING" | "ROLE_NO_SIGNAL" | "ROLE_KL_HIGH" | "ROLE_CLIP_HIGH";

/** One early warning about a role, as metrics.jsonl records it under `warnings`. */
export interface CollapseWarning {
  code: CollapseCode;
  role: string;
  message: string;
  hint: string;
}

/** The codes `failures.onCollapse` acts on; a role without signal is not moving, so it only warns. */
export const COLLAPSE_ACTS: ReadonlySet<CollapseCode> = new Set([
  "ROLE_ENTROPY_COLLAPSE",
  "ROLE_FORMAT_RISING",
  "ROLE_KL_HIGH",
  "ROLE_CLIP_HIGH",
]);

/** What the detector keeps of one role's history: O(window) numbers. */
interface RoleTrack {
  /** first finite entropy logged */
  entropy0: number | null;
  /** consecutive steps whose entropy was below a threshold */
  lowEntropy: number;
  /** format-failure rates of the last `window` steps (since the last rollback) */
  format: number[];
  /** lowest `window`-step mean format-failure rate so far */
  formatBest: number;
  /** consecutive steps whose advantages were all 0 */
  flat: number;
  kl: number[];
  clip: number[];
  rollbacks: number;
}

const FLAT = 1e-6;
const HINT_TAIL = 'look at its latest outputs in trajectories/; set failures.onCollapse to "rollback" or "stop" to act on it';

/** A finite number at `path` of a role's metrics (rows read back from disk hold null for NaN). */
function fig(m: MetricValues, ...path: string[]): number | null {
  let v: unknown = m;
  for (const k of path) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const pct = (x: number) => `${(100 * x).toFixed(0)} %`;
const pushLast = (v: number[], x: number, n: number) => {
  v.push(x);
  if (v.length > n) v.shift();
};

/** Whether the role's advantages this step were all 0 (null: it trained on nothing this step). */
function flatAdvantages(m: MetricValues): boolean | null {
  const std = fig(m, "advantage", "std");
  const avg = fig(m, "advantage", "mean");
  if ((fig(m, "samples") ?? 0) === 0 || std === null || avg === null) return null;
  return std <= FLAT && Math.abs(avg) <= FLAT;
}

function entropyWarning(s: CollapseSettings, step: number, role: string, t: RoleTrack, m: MetricValues): CollapseWarning | null {
  const h = fig(m, "entropy");
  if (h === null) return null;
  const first = t.entropy0;
  t.entropy0 ??= h;
  const relative = first !== null && h < s.entropyFraction * first;
  t.lowEntropy = relative || h < s.entropyMin ? t.lowEntropy + 1 : 0;
  if (t.lowEntropy < s.entropySteps) return null;
  const against = relative
    ? `${pct(h / (first as number))} of its first ${(first as number).toFixed(3)} (failures.collapse.entropyFraction ${s.entropyFraction})`
    : `below failures.collapse.entropyMin ${s.entropyMin}`;
  return {
    code: "ROLE_ENTROPY_COLLAPSE",
    role,
    message: `step ${step}: role "${role}" entropy ${h.toFixed(3)} nats per token is ${against}, ${t.lowEntropy} steps in a row: it is collapsing onto a few outputs`,
    hint: `lower its model's optimizer.lr, or raise algorithm.entropyCoef or algorithm.klCoef; ${HINT_TAIL}`,
  };
}

function formatWarning(s: CollapseSettings, step: number, role: string, t: RoleTrack, m: MetricValues): CollapseWarning | null {
  const x = fig(m, "formatFailureRate");
  if (x === null) return null;
  const best = t.formatBest;
  pushLast(t.format, x, s.window);
  if (t.format.length === s.window) t.formatBest = Math.min(t.formatBest, mean(t.format));
  if (!(x - best >= s.formatRise)) return null;
  return {
    code: "ROLE_FORMAT_RISING",
    role,
    message: `step ${step}: ${pct(x)} of role "${role}"'s outputs failed to parse, up from its best ${pct(best)} (mean of ${s.window} steps; failures.collapse.formatRise ${s.formatRise})`,
    hint: `a role that stops writing its format is often collapsing: lower its model's optimizer.lr; ${HINT_TAIL}`,
  };
}

function rangeWarning(
  code: "ROLE_KL_HIGH" | "ROLE_CLIP_HIGH",
  s: CollapseSettings,
  step: number,
  role: string,
  values: number[],
  x: number | null,
): CollapseWarning | null {
  if (x === null) return null;
  pushLast(values, x, s.window);
  const avg = mean(values);
  const max = code === "ROLE_KL_HIGH" ? s.klMax : s.clipFracMax;
  if (!(avg > max)) return null;
  const what = code === "ROLE_KL_HIGH" ? "KL to the reference" : "clip fraction";
  const setting = code === "ROLE_KL_HIGH" ? "klMax" : "clipFracMax";
  return {
    code,
    role,
    message: `step ${step}: role "${role}" ${what} ${avg.toFixed(3)} (mean of its last ${values.length} steps) is above failures.collapse.${setting} ${max}`,
    hint:
      code === "ROLE_KL_HIGH"
        ? `the role moves far from its reference: raise algorithm.klCoef or lower its model's optimizer.lr; ${HINT_TAIL}`
        : `updates move the role's policy beyond the trust region: lower its model's optimizer.lr or algorithm.epochs; ${HINT_TAIL}`,
  };
}

function noSignalWarning(s: CollapseSettings, step: number, role: string, t: RoleTrack, othersLearn: boolean): CollapseWarning | null {
  if (t.flat < s.noSignalSteps || !othersLearn) return null;
  return {
    code: "ROLE_NO_SIGNAL",
    role,
    message: `step ${step}: every advantage of role "${role}" has been 0 for ${t.flat} steps (its rewards are the same across each of its groups) while other roles learn`,
    hint: "give the role a reward that differs between its outputs (its own format or node reward), raise sampling.roles.<role>.temperature, or check its reward functions with `maso train --check`",
  };
}

export interface CollapseDetector {
  /** The warnings of one row (steps in order); updates each role's history. */
  observe(row: MetricsRow): CollapseWarning[];
  /** A rollback restored `role`: its recent windows start over, its baselines stay. */
  rolledBack(role: string): void;
  /** Rollbacks of `role` so far. */
  rollbacks(role: string): number;
}

/**
 * A detector over a run's rows; feed it every row from step 1 (a resumed run replays its kept
 * history first) so its warnings do not depend on where the run was resumed.
 * @example
 * const d = createCollapseDetector(COLLAPSE_DEFAULTS);
 * for (const row of readMetrics(runDir)) console.log(d.observe(row));
 */
export function createCollapseDetector(settings: CollapseSettings): CollapseDetector {
  const s = settings;
  const tracks = new Map<string, RoleTrack>();
  const track = (role: string) => {
    let t = tracks.get(role);
    if (!t) {
      t = { entropy0: null, lowEntropy: 0, format: [], formatBest: Number.POSITIVE_INFINITY, flat: 0, kl: [], clip: [], rollbacks: 0 };
      tracks.set(role, t);
    }
    return t;
  };
  return {
    observe(row) {
      const roles = Object.entries(row.roles ?? {});
      const flat = new Map(roles.map(([r, m]) => [r, flatAdvantages(m)]));
      const out: (CollapseWarning | null)[] = [];
      for (const [role, m] of roles) {
        const t = track(role);
        const f = flat.get(role);
        if (f !== null) t.flat = f ? t.flat + 1 : 0;
        const othersLearn = [...flat].some(([r, g]) => r !== role && g === false);
        out.push(
          entropyWarning(s, row.step, role, t, m),
          formatWarning(s, row.step, role, t, m),
          noSignalWarning(s, row.step, role, t, othersLearn),
          rangeWarning("ROLE_KL_HIGH", s, row.step, role, t.kl, fig(m, "kl", "ref")),
          rangeWarning("ROLE_CLIP_HIGH", s, row.step, role, t.clip, fig(m, "clipFrac")),
        );
      }
      return out.filter((w): w is CollapseWarning => w !== null);
    },
    rolledBack(role) {
      const t = track(role);
      t.format = [];
      t.lowEntropy = 0;
      t.kl = [];
      t.clip = [];
      t.flat = 0;
      t.rollbacks++;
    },
    rollbacks: (role) => tracks.get(role)?.rollbacks ?? 0,
  };
}
