// Rolling one role back: its policy unit (its LoRA adapter, or its model's base weights when it has
// none) and that unit's AdamW state return to the best checkpoint on dev (checkpoints/best.json), or
// to the newest good checkpoint when the run has no best pointer or its best is the untrained cast
// (step 0 has no checkpoint to restore from). Other units, the value head, the
// run state and the update counter stay. In-process worker groups only.
import { readBest } from "../checkpoint/best.js";
import { listCheckpoints } from "../checkpoint/paths.js";
import { findCheckpoint, type VerifiedCheckpoint } from "../checkpoint/read-checkpoint.js";
import { restoreUnit } from "../checkpoint/restore-unit.js";
import { MasoError } from "../errors.js";
import { policyUnitName } from "../rl/update/units.js";
import type { Runtime } from "../runtime/runtime.js";
import { groupPartName } from "./checkpoint-parts.js";

/** One rollback, as a metrics row records it under `rollback`. */
export interface RollbackEntry {
  /** the collapsing role, and the warning that moved it */
  role: string;
  code: string;
  model: string;
  /** "adapter:<name>" or "base" */
  unit: string;
  /** the checkpoint restored, and why that one */
  step: number;
  checkpoint: "best" | "latest";
  /** roles served by the same unit: their weights went back too */
  roles: string[];
}

/** The checkpoint to return to: best on dev when it has one, else the newest good one; null when the run has none yet. */
async function rollbackTarget(runDir: string): Promise<{ ckpt: VerifiedCheckpoint; checkpoint: "best" | "latest" } | null> {
  const steps = (await listCheckpoints(runDir)).map((c) => c.step);
  if (steps.length === 0) return null;
  const best = await readBest(runDir);
  if (best && steps.includes(best.step)) return { ckpt: await findCheckpoint(runDir, { step: best.step }), checkpoint: "best" };
  return { ckpt: await findCheckpoint(runDir, { fallback: true }), checkpoint: "latest" };
}

/** The policy unit that trains `role` and the roles that share it; null when that unit is not trained. */
export function roleUnit(
  rt: Pick<Runtime<object, unknown>, "cast" | "workers">,
  role: string,
): { model: string; unit: string; roles: string[] } | null {
  const entry = rt.cast.roles.get(role);
  const wg = entry && rt.workers[entry.model];
  if (!entry || !wg) return null;
  const unit = policyUnitName(entry.adapter);
  if (!wg.units.has(unit)) return null;
  const roles = [...rt.cast.roles].filter(([, e]) => e.model === entry.model && e.adapter === entry.adapter).map(([r]) => r);
  return { model: entry.model, unit, roles };
}

/**
 * Restores `role`'s policy unit from the rollback checkpoint. Returns null when the run has no
 * checkpoint yet or the role's unit is not trained (nothing to return to); throws ROLLBACK_REMOTE for
 * worker groups in other processes.
 * @example
 * const entry = await rollbackRole(rt, runDir, "checker", "ROLE_ENTROPY_COLLAPSE");
 */
export async function rollbackRole(
  rt: Runtime<object, unknown>,
  runDir: string,
  role: string,
  code: string,
): Promise<RollbackEntry | null> {
  if (rt.remote)
    throw new MasoError(
      "ROLLBACK_REMOTE",
      `cannot roll role "${role}" back: its worker group runs in another process`,
      'failures.onCollapse "rollback" needs runtime.transport "in-process"; use "stop" over NATS',
    );
  const target = roleUnit(rt, role);
  const at = target && (await rollbackTarget(runDir));
  if (!target || !at) return null;
  const part = groupPartName(rt, target.model)!;
  await restoreUnit(at.ckpt.part(part), rt.workers[target.model], target.unit);
  return { role, code, model: target.model, unit: target.unit, step: at.ckpt.step, checkpoint: at.checkpoint, roles: target.roles };
}
