// Learning-rate schedules: linear warmup, then constant or cosine decay. Pure functions of the
// step, so a resumed run gets exactly the same rates.
import { MasoError } from "../../errors.js";

export interface LrSchedule {
  kind: "constant" | "cosine";
  lr: number;
  warmupSteps?: number;
  /** cosine only: total steps, and the floor it decays to */
  totalSteps?: number;
  minLr?: number;
}

/** Learning rate for optimiser step `step` (0-based). */
export function lrAt(s: LrSchedule, step: number): number {
  const warm = s.warmupSteps ?? 0;
  if (step < warm) return (s.lr * (step + 1)) / warm;
  if (s.kind === "constant") return s.lr;
  if (!s.totalSteps || s.totalSteps <= warm) throw new MasoError("SCHEDULE", "cosine schedule needs totalSteps > warmupSteps");
  const minLr = s.minLr ?? 0;
  const t = Math.min(1, (step - warm) / (s.totalSteps - warm));
  return minLr + 0.5 * (s.lr - minLr) * (1 + Math.cos(Math.PI * t));
}
