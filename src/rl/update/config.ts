// Defaults and range checks for TrainerConfig. One place for defaults so documentation and
// behaviour cannot drift; it never runs an update.
import { MasoError } from "../../errors.js";
import type { TrainerConfig } from "./types.js";

/** PPO defaults: 1 epoch, one minibatch, token-level clip 0.2, no KL/entropy terms, recomputed old log-probs, lr 1e-4. */
export const DEFAULT_TRAINER: TrainerConfig = {
  epochs: 1,
  minibatchSize: 0,
  policyLoss: "token",
  lengthNormalize: false,
  clipLow: 0.2,
  clipHigh: 0.2,
  aggregation: "token-mean",
  kl: { coef: 0, estimator: "k3", placement: "loss" },
  entropyCoef: 0,
  oldLogProbs: "recompute",
  importanceCap: 2,
  value: { coef: 0.5, clip: 0.2, huber: 10, level: "action" },
  maxGradNorm: 1,
  activationBudgetMb: 1024,
  lr: 1e-4,
  weightDecay: 0,
  betas: [0.9, 0.999],
  seed: 0,
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
