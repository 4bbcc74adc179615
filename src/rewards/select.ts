// Picks the trainable records a reward helper applies to (by role, node or predicate).
// Never looks at rewards; never returns tool or function records.

import { isTrainable, type StepRecord, type Trajectory } from "../workflow/trajectory.js";
import type { RecordSelection } from "./types.js";

/**
 * The trainable records of a trajectory that match a selection, in trajectory order.
 *
 * @example
 * selectRecords(traj, { roles: ["search", "summarize", "update"] });
 */
export function selectRecords(trajectory: Trajectory<unknown>, selection: RecordSelection = {}): StepRecord[] {
  return trajectory.records.filter(
    (r) =>
      isTrainable(r) &&
      (selection.roles === undefined || (r.role !== null && selection.roles.includes(r.role))) &&
      (selection.nodes === undefined || selection.nodes.includes(r.node)) &&
      (selection.where === undefined || selection.where(r)),
  );
}
