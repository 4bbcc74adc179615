// The estimator registry: a plain Record from name to Estimator, built once from the built-ins and
// frozen; a run names one of them. Registering a name twice throws; lookups of unknown names throw
// with the list of known ones.

import { MasoError } from "../../errors.js";
import { gaeAction } from "./gae-action.js";
import { gaeToken } from "./gae-token.js";
import { drGrpo, grpo, rloo } from "./group-baseline.js";
import { reinforcePP } from "./reinforce-pp.js";
import type { Estimator } from "./types.js";

/** Names of the built-in estimators. */
export type EstimatorName = "gae-action" | "gae-token" | "grpo" | "rloo" | "reinforce-pp" | "dr-grpo";

/**
 * Adds an estimator under its name; throws `RL_DUPLICATE` if the name is taken. It builds the
 * built-in table below and is not public: worker groups (in other processes too) look estimators up
 * in that table only, so an estimator registered elsewhere could never be chosen by name.
 *
 * @example
 * const reg = registerEstimator(Object.create(null), grpo);
 */
export function registerEstimator<R extends Record<string, Estimator>>(registry: R, estimator: Estimator): R {
  if (Object.hasOwn(registry, estimator.name)) {
    throw new MasoError(
      "RL_DUPLICATE",
      `estimator "${estimator.name}" is already registered`,
      "pick another name or build a fresh registry",
    );
  }
  (registry as Record<string, Estimator>)[estimator.name] = estimator;
  return registry;
}

/**
 * Builds a registry from a list; throws on duplicate names.
 *
 * @example
 * const reg = createEstimatorRegistry([grpo, rloo]);
 */
export function createEstimatorRegistry(list: readonly Estimator[]): Record<string, Estimator> {
  const registry: Record<string, Estimator> = Object.create(null);
  for (const e of list) registerEstimator(registry, e);
  return registry;
}

/** The built-in estimators by name. */
export const estimators: Readonly<Record<EstimatorName, Estimator>> = Object.freeze(
  createEstimatorRegistry([gaeAction, gaeToken, grpo, rloo, reinforcePP, drGrpo]) as Record<EstimatorName, Estimator>,
);

/**
 * Looks a name up; throws `RL_UNKNOWN_ESTIMATOR` with the known names when absent.
 *
 * @example
 * getEstimator("grpo").estimate(batch);
 */
export function getEstimator(name: string, registry: Readonly<Record<string, Estimator>> = estimators): Estimator {
  if (!Object.hasOwn(registry, name)) {
    throw new MasoError("RL_UNKNOWN_ESTIMATOR", `no advantage estimator named "${name}"`, `use one of ${Object.keys(registry).join(", ")}`);
  }
  return registry[name];
}
