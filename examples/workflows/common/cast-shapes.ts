// The three cast shapes of the parameter-sharing comparison, for any reference workflow: which
// models a run config declares and which model (and adapter) each role is cast onto.

/**
 * How roles map to weights:
 * - `lora`: one frozen base, one rank-8 LoRA adapter per role (the default: cheap, roles stay apart);
 * - `shared`: one fully fine-tuned model that every role uses (parameter sharing);
 * - `perRole`: one fully fine-tuned copy of the base per role (no sharing at all).
 */
export type CastShape = "lora" | "shared" | "perRole";

export interface CastLearningRates {
  /** the LoRA adapters' step */
  lora: number;
  /** full fine-tuning's step: it moves every weight, so it is usually ~10x smaller than `lora` */
  full: number;
}

/**
 * `models` and `cast` of a run config for `roles` on the model directory `weights`, shaped by `shape`.
 * @example castModels(["plan", "code"], "shared", "models/base", { lora: 3e-4, full: 3e-5 })
 */
export function castModels(roles: readonly string[], shape: CastShape, weights: string, lr: CastLearningRates) {
  const optimizer = { lr: shape === "lora" ? lr.lora : lr.full, maxGradNorm: 1 };
  if (shape === "lora") {
    const lora = { rank: 8, alpha: 16, adapters: [...roles] };
    return {
      models: { base: { weights, lora, optimizer } },
      cast: Object.fromEntries(roles.map((r) => [r, `base/${r}`])),
    };
  }
  if (shape === "shared") {
    return { models: { shared: { weights, optimizer } }, cast: Object.fromEntries(roles.map((r) => [r, "shared"])) };
  }
  return {
    models: Object.fromEntries(roles.map((r) => [r, { weights, optimizer }])),
    cast: Object.fromEntries(roles.map((r) => [r, r])),
  };
}
