// AdamW over groups of (params, grads) tables, with global gradient-norm clipping. Moments live in
// tables of the same layout as the parameters (one allocation each), so state save/load is a
// plain copy. Matches torch.optim.AdamW + torch.nn.utils.clip_grad_norm_.
import { MasoError } from "../../errors.js";
import { hugePages, native } from "../../native/binding.js";
import type { ParamTable } from "../params.js";

export interface AdamWConfig {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Decoupled weight decay, applied to every tensor in the groups. */
  weightDecay?: number;
  /** Clip the global gradient norm to this (none when undefined). */
  maxGradNorm?: number;
}

export interface ParamGroup {
  name: string;
  params: ParamTable;
  grads: ParamTable;
}

export interface AdamWState {
  step: number;
  /** per group name: first and second moments, same layout as the group's params */
  moments: Map<string, { m: Float32Array; v: Float32Array }>;
}

export interface StepReport {
  /** global gradient norm before clipping */
  gradNorm: number;
  lr: number;
  /** true when the gradient was non-finite and the update was skipped */
  skipped: boolean;
}

export interface AdamW {
  readonly config: Required<Omit<AdamWConfig, "maxGradNorm">> & { maxGradNorm?: number };
  readonly state: AdamWState;
  /** One update with the given learning rate (default config.lr). */
  step(lr?: number): StepReport;
}

/** Global L2 norm of several gradient buffers. */
export function globalGradNorm(grads: readonly Float32Array[]): number {
  const kernels = native();
  let s = 0;
  for (const g of grads) s += kernels.sumsq(g, g.length);
  return Math.sqrt(s);
}

export function createAdamW(groups: readonly ParamGroup[], cfg: AdamWConfig): AdamW {
  const config = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, ...cfg };
  for (const [key, v] of Object.entries(config)) {
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < 0)) {
      throw new MasoError("OPTIM_CONFIG", `AdamW ${key} must be a finite non-negative number, got ${String(v)}`);
    }
  }
  if (config.beta1 >= 1 || config.beta2 >= 1) throw new MasoError("OPTIM_CONFIG", "AdamW betas must be < 1");
  const names = new Set<string>();
  const moments = new Map<string, { m: Float32Array; v: Float32Array }>();
  for (const g of groups) {
    if (names.has(g.name)) throw new MasoError("OPTIM_GROUPS", `parameter group '${g.name}' given twice`);
    names.add(g.name);
    if (g.grads.data.length !== g.params.data.length)
      throw new MasoError("OPTIM_GROUPS", `group '${g.name}': grads and params differ in size`);
    const n = g.params.data.length;
    moments.set(g.name, { m: hugePages(new Float32Array(n)), v: hugePages(new Float32Array(n)) });
  }
  const state: AdamWState = { step: 0, moments };

  return {
    config,
    state,
    step(lr = config.lr) {
      const kernels = native();
      const gradNorm = globalGradNorm(groups.map((g) => g.grads.data));
      if (!Number.isFinite(gradNorm)) return { gradNorm, lr, skipped: true };
      if (config.maxGradNorm !== undefined) {
        const coef = config.maxGradNorm / (gradNorm + 1e-6);
        if (coef < 1) for (const g of groups) kernels.scale(g.grads.data, coef, g.grads.data.length);
      }
      state.step++;
      const bc1 = 1 - config.beta1 ** state.step;
      const bc2 = 1 - config.beta2 ** state.step;
      for (const g of groups) {
        const mv = moments.get(g.name)!;
        const n = g.params.data.length;
        kernels.adamwUpdate(
          g.params.data,
          g.grads.data,
          mv.m,
          mv.v,
          n,
          lr,
          config.beta1,
          config.beta2,
          config.eps,
          config.weightDecay,
          bc1,
          bc2,
        );
      }
      return { gradNorm, lr, skipped: false };
    },
  };
}
