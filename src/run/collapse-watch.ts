// The training loop's watch for collapsing roles: after each step it adds the early warnings of
// collapse-detect.ts to the step's metrics row and, as `failures.onCollapse` says, only warns (the
// default: training is untouched), stops the run (ROLE_COLLAPSED) or rolls the collapsing role back
// to the best checkpoint (role-rollback.ts) and records it in the row under `rollback`.
import { MasoError } from "../errors.js";
import type { MetricsRow } from "../progress/metrics-row.js";
import type { Runtime } from "../runtime/runtime.js";
import {
  COLLAPSE_ACTS,
  COLLAPSE_DEFAULTS,
  type CollapseSettings,
  type CollapseWarning,
  createCollapseDetector,
} from "./collapse-detect.js";
import { type RollbackEntry, roleUnit, rollbackRole } from "./role-rollback.js";
import type { TrainRow } from "./step-row.js";

export type OnCollapse = "warn" | "stop" | "rollback";

/** `failures.collapse` and `failures.onCollapse` of a run config. */
export interface CollapseOptions {
  settings?: Partial<CollapseSettings>;
  /** default "warn" */
  onCollapse?: OnCollapse;
}

export interface CollapseWatch {
  /**
   * Adds the step's warnings to `row` (and, rolling back, its `rollback` entries); returns the
   * ROLE_COLLAPSED error to stop with, or null to go on.
   */
  afterStep(row: TrainRow): Promise<MasoError | null>;
}

function collapsed(row: TrainRow, w: CollapseWarning, runDir: string, why: string): MasoError {
  return new MasoError(
    "ROLE_COLLAPSED",
    `step ${row.step}: role "${w.role}" is collapsing (${w.code}): ${w.message}; ${why}`,
    `${w.hint}. The step's files are written; to go on, edit ${runDir}/config.json (a lower optimizer.lr, or failures.onCollapse "rollback" or "warn") and run \`maso train --resume ${runDir}\`, which continues from the newest checkpoint`,
  );
}

/**
 * The watch of a run whose kept metrics rows are `history` (steps 1…n, replayed so that a resumed
 * run warns and rolls back exactly as an uninterrupted one).
 * @example
 * const watch = openCollapseWatch(rt, runDir, readMetrics(runDir), { onCollapse: "stop" });
 * const stop = await watch.afterStep(row);
 */
export function openCollapseWatch(
  rt: Runtime<object, unknown>,
  runDir: string,
  history: readonly MetricsRow[],
  o: CollapseOptions = {},
): CollapseWatch {
  const settings: CollapseSettings = { ...COLLAPSE_DEFAULTS, ...o.settings };
  const onCollapse = o.onCollapse ?? "warn";
  const detector = createCollapseDetector(settings);
  // a rollback starts the recent windows over for every role that shares the restored unit
  const restarted = (entries: readonly RollbackEntry[]) => {
    for (const e of entries) for (const r of e.roles) detector.rolledBack(r);
  };
  for (const row of history) {
    detector.observe(row);
    restarted((row.rollback as RollbackEntry[] | undefined) ?? []);
  }
  /** Rolls each acting warning's role back once (into `entries`); what stops the run instead, if anything. */
  const rollBack = async (acting: readonly CollapseWarning[], entries: RollbackEntry[]) => {
    const done = new Set<string>();
    for (const w of acting) {
      const unit = roleUnit(rt, w.role);
      if (!unit || done.has(`${unit.model}/${unit.unit}`)) continue; // untrained, or restored already this step
      if (detector.rollbacks(w.role) >= settings.maxRollbacks)
        return { warning: w, why: `it was rolled back ${settings.maxRollbacks} times already (failures.collapse.maxRollbacks)` };
      const entry = await rollbackRole(rt, runDir, w.role, w.code);
      if (!entry) return { warning: w, why: "the run has no checkpoint to roll it back to yet" };
      done.add(`${entry.model}/${entry.unit}`);
      entries.push(entry);
    }
    return null;
  };
  return {
    async afterStep(row) {
      const found = detector.observe(row);
      if (found.length > 0) row.warnings = [...(row.warnings ?? []), ...found];
      const acting = found.filter((w) => COLLAPSE_ACTS.has(w.code));
      if (onCollapse === "warn" || acting.length === 0) return null;
      if (onCollapse === "stop") return collapsed(row, acting[0], runDir, 'failures.onCollapse is "stop"');
      const entries: RollbackEntry[] = [];
      const stop = await rollBack(acting, entries);
      if (entries.length > 0) row.rollback = entries;
      restarted(entries);
      return stop && collapsed(row, stop.warning, runDir, stop.why);
    },
  };
}
