// The thresholds of a role's early collapse warnings (`failures.collapse`), here so the config schema
// and the detector (run/collapse-detect.ts) share one source of defaults.

/** The thresholds of `failures.collapse` (docs/config.md). */
export interface CollapseSettings {
  /** steps averaged for the format baseline, KL and clip fraction */
  window: number;
  /** warn when entropy falls below this fraction of the role's first logged entropy */
  entropyFraction: number;
  /** warn when entropy falls below this many nats per token (0: off) */
  entropyMin: number;
  /** steps in a row the entropy must stay that low: one step's entropy swings several-fold when a role samples near-greedily */
  entropySteps: number;
  /** warn when a step's format-failure rate is this far above the role's best `window`-step mean */
  formatRise: number;
  /** warn when every advantage of the role was 0 this many steps in a row while another role learned */
  noSignalSteps: number;
  /** warn when the mean KL to the reference over the last `window` steps exceeds this (nats per token) */
  klMax: number;
  /** warn when the mean clip fraction over the last `window` steps exceeds this */
  clipFracMax: number;
  /** rollbacks of one role before `onCollapse: "rollback"` stops the run instead */
  maxRollbacks: number;
}

/**
 * Defaults chosen to stay silent on healthy runs: a healthy RL run lowers entropy by far less than
 * 10× and moves a role's format-failure rate by less than 35 points in a step, while a role that
 * collapses onto one answer does both.
 */
export const COLLAPSE_DEFAULTS: Readonly<CollapseSettings> = {
  window: 5,
  entropyFraction: 0.1,
  entropyMin: 0,
  entropySteps: 3,
  formatRise: 0.35,
  noSignalSteps: 5,
  klMax: 1,
  clipFracMax: 0.4,
  maxRollbacks: 3,
};
