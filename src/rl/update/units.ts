// The trainable parameter units of one model — the base (full fine-tuning), each LoRA adapter, the
// value head — each with its own AdamW, so an update steps only the units it trained (an adapter
// of a role that was not updated stays bit-identical). It never computes losses.
import type { Decoder } from "../../engine/model/decoder.js";
import { type AdamW, createAdamW } from "../../engine/optim/adamw.js";
import { lrAt } from "../../engine/optim/schedule.js";
import type { ParamTable } from "../../engine/params.js";
import { clipGradNorm, gradNorm } from "../losses/grad-clip.js";
import type { TrainerConfig } from "./types.js";

export interface TrainUnit {
  /** "base", "adapter:<name>" or "value-head". */
  name: string;
  params: ParamTable;
  grads: ParamTable;
  optimizer: AdamW;
  /** the configured peak rate */
  baseLr: number;
  /** the rate of the next optimiser step: baseLr times the schedule's factor */
  lr: number;
}

/** The unit a sample's policy gradient trains: its adapter, or the base. */
export const policyUnitName = (adapter: string | null): string => (adapter === null ? "base" : `adapter:${adapter}`);

/**
 * Builds one AdamW per trainable part of `model` (base only when its gradients are on).
 *
 * @example
 * const units = createUnits(model, cfg); units.get("adapter:actor");
 */
export function createUnits(model: Decoder, cfg: TrainerConfig): Map<string, TrainUnit> {
  const units = new Map<string, TrainUnit>();
  const add = (name: string, params: ParamTable, grads: ParamTable, lr: number) => {
    const optimizer = createAdamW([{ name, params, grads }], {
      lr,
      weightDecay: cfg.weightDecay,
      beta1: cfg.betas[0],
      beta2: cfg.betas[1],
      ...(cfg.eps !== undefined && { eps: cfg.eps }),
    });
    units.set(name, { name, params, grads, optimizer, baseLr: lr, lr });
  };
  if (model.grads) add("base", model.params, model.grads, cfg.lr);
  for (const a of model.adapters.values()) add(policyUnitName(a.name), a.params, a.grads, cfg.lr);
  if (model.valueHead) add("value-head", model.valueHead.params, model.valueHead.grads, cfg.criticLr ?? cfg.lr);
  return units;
}

/** Copies of the units' gradients (to measure one role's contribution). */
export function snapshotGrads(units: readonly TrainUnit[]): Float32Array[] {
  return units.map((u) => u.grads.data.slice());
}

/** ‖g − g₀‖² summed over units. */
export function deltaSq(units: readonly TrainUnit[], before: readonly Float32Array[]): number {
  let s = 0;
  units.forEach((u, i) => {
    const g = u.grads.data;
    const b = before[i];
    for (let j = 0; j < g.length; j++) s += (g[j] - b[j]) ** 2;
  });
  return s;
}

/**
 * Clips the global gradient norm over `units` and steps their optimisers; returns the pre-clip
 * norm (NaN and no step when non-finite).
 */
export function clipAndStep(units: readonly TrainUnit[], maxGradNorm: number | undefined): number {
  const grads = units.map((u) => u.grads.data);
  const norm = maxGradNorm === undefined ? gradNorm(grads) : clipGradNorm(grads, maxGradNorm, { errorIfNonfinite: false });
  if (!Number.isFinite(norm)) return Number.NaN;
  for (const u of units) u.optimizer.step(u.lr);
  return norm;
}

/** Sets every unit's rate for an update at RL step `step` (0-based) from the trainer's schedule. */
export function scheduleUnits(units: Iterable<TrainUnit>, cfg: TrainerConfig, step: number): void {
  const f = cfg.lrSchedule ? lrAt({ ...cfg.lrSchedule, lr: 1 }, step) : 1;
  for (const u of units) u.lr = u.baseLr * f;
}
