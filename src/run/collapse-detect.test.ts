// Each collapse detector on hand-made metrics rows: it fires on the collapse it is for (the format
// detector before a role reaches 100 % failures), stays silent on a healthy run, and gives the same
// warnings for rows read back from metrics.jsonl (null for NaN) as for live rows.
import { describe, expect, it } from "vitest";
import type { MetricsRow, MetricValues } from "../progress/metrics-row.js";
import { COLLAPSE_DEFAULTS, type CollapseSettings, createCollapseDetector } from "./collapse-detect.js";

interface Figures {
  entropy?: number;
  ff?: number;
  adv?: [number, number];
  kl?: number;
  clip?: number;
  samples?: number;
}

/** A role's metrics as role-rows.ts writes them (NaN where a figure does not apply). */
const role = (f: Figures): MetricValues => ({
  reward: { total: 0.5 },
  samples: f.samples ?? 16,
  formatFailureRate: f.ff ?? 0,
  advantage: { mean: f.adv?.[0] ?? 0.01, std: f.adv?.[1] ?? 0.4 },
  entropy: f.entropy ?? 1.5,
  kl: { ref: f.kl ?? Number.NaN, approx: 0 },
  clipFrac: f.clip ?? 0,
});

const rowOf = (step: number, roles: Record<string, Figures>): MetricsRow => ({
  step,
  roles: Object.fromEntries(Object.entries(roles).map(([r, f]) => [r, role(f)])),
});

/** The warnings of every step of `rows`, as `step code:role`. */
function fired(rows: MetricsRow[], settings: Partial<CollapseSettings> = {}): string[] {
  const d = createCollapseDetector({ ...COLLAPSE_DEFAULTS, ...settings });
  return rows.flatMap((r) => d.observe(r).map((w) => `${r.step} ${w.code}:${w.role}`));
}

/** A deterministic wobble in [-1, 1]. */
const wobble = (i: number) => Math.sin(i * 12.9898) * 0.999;

/** 40 healthy steps of two roles: entropy drifting down by a third, format failures around 17 %, modest KL and clipping. */
const healthy = Array.from({ length: 40 }, (_, i) =>
  rowOf(i + 1, {
    plan: {
      entropy: 1.2 - 0.4 * (i / 40) + 0.05 * wobble(i),
      ff: 0.17 + 0.15 * wobble(i + 3),
      kl: 0.05 + 0.03 * wobble(i),
      clip: 0.1 + 0.05 * wobble(i + 1),
    },
    check: { entropy: 0.6 - 0.2 * (i / 40), ff: 0.05 + 0.05 * wobble(i + 7), kl: 0.02, clip: 0.05 },
  }),
);

describe("collapse detectors", () => {
  it("stay silent on a healthy run", () => {
    expect(fired(healthy)).toEqual([]);
  });

  it("format failures 0 % → 44 % → 100 %: ROLE_FORMAT_RISING at the 44 % step, before 100 %", () => {
    const ff = (s: number) => (s < 32 ? (s % 7 === 0 ? 0.06 : 0) : s === 32 ? 0.44 : 1);
    const rows = Array.from({ length: 34 }, (_, i) => rowOf(i + 1, { check: { ff: ff(i + 1) }, code: {} }));
    const got = fired(rows);
    expect(got.filter((w) => w.includes("ROLE_FORMAT_RISING"))).toEqual([
      "32 ROLE_FORMAT_RISING:check",
      "33 ROLE_FORMAT_RISING:check",
      "34 ROLE_FORMAT_RISING:check",
    ]);
    const d = createCollapseDetector(COLLAPSE_DEFAULTS);
    for (const r of rows.slice(0, 31)) d.observe(r);
    expect(d.observe(rows[31])[0].message).toBe(
      `step 32: 44 % of role "check"'s outputs failed to parse, up from its best 0 % (mean of 5 steps; failures.collapse.formatRise 0.35)`,
    );
  });

  it("a role that started broken and stays broken is not rising", () => {
    const rows = Array.from({ length: 12 }, (_, i) => rowOf(i + 1, { solver: { ff: 1 } }));
    expect(fired(rows)).toEqual([]);
  });

  it("entropy below a tenth of the role's first for entropySteps steps in a row: ROLE_ENTROPY_COLLAPSE", () => {
    const h = [1.5, 1.4, 1.2, 0.9, 0.4, 0.16, 0.12, 0.05, 0.04, 0.03];
    const rows = h.map((e, i) => rowOf(i + 1, { check: { entropy: e }, code: {} }));
    // below 0.15 from step 7: the third such step in a row is step 9
    expect(fired(rows)).toEqual(["9 ROLE_ENTROPY_COLLAPSE:check", "10 ROLE_ENTROPY_COLLAPSE:check"]);
    expect(fired(rows, { entropySteps: 1 })[0]).toBe("7 ROLE_ENTROPY_COLLAPSE:check");
    expect(fired(rows, { entropyFraction: 0.3, entropySteps: 1 })[0]).toBe("5 ROLE_ENTROPY_COLLAPSE:check");
    // the absolute floor holds from the first step; a role that never logs entropy is never judged
    expect(fired(rows, { entropyMin: 1.45, entropySteps: 1 })[0]).toBe("2 ROLE_ENTROPY_COLLAPSE:check");
    expect(fired(rows.map((r) => ({ ...r, roles: { check: { ...r.roles!.check, entropy: Number.NaN } } })))).toEqual([]);
  });

  it("a near-greedy role whose entropy dips for a step or two and comes back never warns", () => {
    // a role sampled near-greedily logs a few hundredths of a nat, swinging several-fold step to step
    const h = [0.037, 0.047, 0.02, 0.03, 0.012, 0.019, 0.006, 0.0, 0.047, 0.017, 0.002, 0.034, 0.013];
    const rows = h.map((e, i) => rowOf(i + 1, { plan: { entropy: e } }));
    expect(fired(rows)).toEqual([]);
    expect(fired(rows, { entropySteps: 1 })).toEqual(["8 ROLE_ENTROPY_COLLAPSE:plan", "11 ROLE_ENTROPY_COLLAPSE:plan"]);
  });

  it("a role whose advantages are all 0 for noSignalSteps steps while another learns: ROLE_NO_SIGNAL", () => {
    const rows = Array.from({ length: 7 }, (_, i) => rowOf(i + 1, { plan: {}, reflect: { adv: i === 0 ? [0.1, 0.3] : [0, 0] } }));
    expect(fired(rows)).toEqual(["6 ROLE_NO_SIGNAL:reflect", "7 ROLE_NO_SIGNAL:reflect"]);
    // every role flat: the step-level NO_SIGNAL says it, not this one
    const allFlat = rows.map((_, i) => rowOf(i + 1, { plan: { adv: [0, 0] }, reflect: { adv: [0, 0] } }));
    expect(fired(allFlat)).toEqual([]);
    // a step where the role trained on nothing neither breaks nor extends the run of flat steps
    const gap = rows.map((r, i) => (i === 3 ? rowOf(i + 1, { plan: {}, reflect: { samples: 0, adv: [Number.NaN, Number.NaN] } }) : r));
    expect(fired(gap)).toEqual(["7 ROLE_NO_SIGNAL:reflect"]);
  });

  it("KL to the reference and clip fraction above range over the window: ROLE_KL_HIGH, ROLE_CLIP_HIGH", () => {
    const kl = [0.1, 0.2, 0.5, 1.5, 2.5, 3];
    const rows = kl.map((k, i) => rowOf(i + 1, { code: { kl: k, clip: k / 4 } }));
    expect(fired(rows, { window: 3 })).toEqual([
      "5 ROLE_KL_HIGH:code",
      "6 ROLE_KL_HIGH:code",
      "6 ROLE_CLIP_HIGH:code", // mean of 0.375, 0.625, 0.75
    ]);
  });

  it("a rollback starts the role's recent windows over and is counted", () => {
    const d = createCollapseDetector({ ...COLLAPSE_DEFAULTS, window: 2 });
    for (const [i, k] of [1.5, 1.5].entries()) d.observe(rowOf(i + 1, { code: { kl: k } }));
    expect(d.observe(rowOf(3, { code: { kl: 1.5 } })).map((w) => w.code)).toEqual(["ROLE_KL_HIGH"]);
    d.rolledBack("code");
    expect(d.rollbacks("code")).toBe(1);
    expect(d.observe(rowOf(4, { code: { kl: 0.2 } }))).toEqual([]); // the pre-rollback 1.5s are gone
  });

  it("rows read back from metrics.jsonl (null for NaN) warn exactly as live rows", () => {
    const h = [1.5, 1.4, 0.1, 0.1];
    const rows = h.map((e, i) => rowOf(i + 1, { check: { entropy: e, ff: i === 3 ? 0.9 : 0 } }));
    const disk = rows.map((r) => JSON.parse(JSON.stringify(r)) as MetricsRow);
    expect(JSON.stringify(disk[0].roles!.check.kl)).toBe('{"ref":null,"approx":0}');
    expect(fired(disk, { window: 2, entropySteps: 1 })).toEqual(fired(rows, { window: 2, entropySteps: 1 }));
    expect(fired(rows, { window: 2, entropySteps: 1 })).toEqual([
      "3 ROLE_ENTROPY_COLLAPSE:check",
      "4 ROLE_ENTROPY_COLLAPSE:check",
      "4 ROLE_FORMAT_RISING:check",
    ]);
  });
});
