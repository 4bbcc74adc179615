// Defaults and range checks for TrainerConfig. The defaults come from the one table the run config
// reads too (src/defaults.ts), so a library user and `maso train` get the same update; it never
// runs an update.
import { TRAINER_DEFAULTS as D } from "../../defaults.js";
import { MasoError } from "../../errors.js";
import type { TrainerConfig } from "./types.js";

/**
 * PPO defaults (src/defaults.ts): 1 epoch, minibatches of 16 samples, token-level clip [0.8, 1.28],
 * no KL/entropy terms, recomputed old log-probs, lr 1e-5.
 */
export const DEFAULT_TRAINER: TrainerConfig = {
  epochs: D.epochs,
  minibatchSize: D.minibatchSize,
  policyLoss: D.actionLevel ? "action" : "token",
  lengthNormalize: D.lengthNormalize,
  clipLow: D.clipLow,
  clipHigh: D.clipHigh,
  aggregation: D.aggregation,
  kl: { coef: D.klCoef, estimator: D.klEstimator, placement: D.klPlacement },
  entropyCoef: D.entropyCoef,
  oldLogProbs: D.oldLogProbs,
  importanceCap: D.importanceCap,
  value: { coef: D.valueCoef, clip: D.valueClip, huber: D.valueHuber, level: D.valueLevel },
  maxGradNorm: D.maxGradNorm,
  activationBudgetMb: D.activationBudgetMb,
  lr: D.lr,
  eps: D.eps,
  weightDecay: D.weightDecay,
  betas: [D.beta1, D.beta2],
  seed: D.seed,
};

/** Optional-field form of TrainerConfig for callers. */
export type TrainerOptions = Partial<Omit<TrainerConfig, "kl" | "value">> & {
  kl?: Partial<TrainerConfig["kl"]>;
  value?: Partial<TrainerConfig["value"]>;
};

/**
 * Fills defaults and checks ranges.
 *
 * @example
 * const cfg = resolveTrainerConfig({ lr: 3e-4, epochs: 2, kl: { coef: 0.01 } });
 */
export function resolveTrainerConfig(o: TrainerOptions = {}): TrainerConfig {
  const c: TrainerConfig = {
    ...DEFAULT_TRAINER,
    ...o,
    kl: { ...DEFAULT_TRAINER.kl, ...o.kl },
    value: { ...DEFAULT_TRAINER.value, ...o.value },
    activationBudgetMb: o.activationBudgetMb ?? DEFAULT_TRAINER.activationBudgetMb,
  };
  const bad = (field: string, v: unknown, allowed: string) =>
    new MasoError("TRAINER_CONFIG", `trainer.${field} is ${String(v)}`, `use ${allowed}`);
  const posInt = (f: "epochs", v: number) => {
    if (!Number.isInteger(v) || v < 1) throw bad(f, v, "an integer >= 1");
  };
  posInt("epochs", c.epochs);
  if (!Number.isInteger(c.minibatchSize) || c.minibatchSize < 0) throw bad("minibatchSize", c.minibatchSize, "an integer >= 0 (0 = all)");
  if (c.policyLoss !== "token" && c.policyLoss !== "action") throw bad("policyLoss", c.policyLoss, '"token" or "action"');
  if (!(c.lr > 0)) throw bad("lr", c.lr, "a positive learning rate");
  if (c.criticLr !== undefined && !(c.criticLr > 0)) throw bad("criticLr", c.criticLr, "a positive learning rate");
  if (!(c.kl.coef >= 0)) throw bad("kl.coef", c.kl.coef, "a number >= 0");
  if (!["k1", "k2", "k3"].includes(c.kl.estimator)) throw bad("kl.estimator", c.kl.estimator, "k1, k2 or k3");
  if (c.kl.placement !== "loss" && c.kl.placement !== "reward") throw bad("kl.placement", c.kl.placement, '"loss" or "reward"');
  if (c.oldLogProbs !== "rollout" && c.oldLogProbs !== "recompute") throw bad("oldLogProbs", c.oldLogProbs, '"rollout" or "recompute"');
  if (!(c.importanceCap >= 1) || !Number.isFinite(c.importanceCap)) throw bad("importanceCap", c.importanceCap, "a finite number >= 1");
  if (!(c.entropyCoef >= 0)) throw bad("entropyCoef", c.entropyCoef, "a number >= 0");
  if (c.value.level !== "token" && c.value.level !== "action") throw bad("value.level", c.value.level, '"token" or "action"');
  if (c.approxKlSkip !== undefined && !(c.approxKlSkip > 0)) throw bad("approxKlSkip", c.approxKlSkip, "a positive threshold");
  if (c.maxGradNorm !== undefined && !(c.maxGradNorm > 0)) throw bad("maxGradNorm", c.maxGradNorm, "a positive norm");
  if (!(c.activationBudgetMb > 0 && c.activationBudgetMb <= 2 ** 20))
    throw bad("activationBudgetMb", c.activationBudgetMb, "a positive size in MiB, at most 1048576");
  return c;
}
