// Reads and range-checks the shared estimator options, applying each estimator's defaults.
// One place for defaults so the docs in types.ts and the behaviour cannot drift apart.

import { MasoError } from "../../errors.js";
import { checkOption } from "../validate.js";
import type { EstimatorOptions, GroupField, NormalizeScope } from "./types.js";

const SCOPES: readonly NormalizeScope[] = ["role", "role-turn", "model", "global", "none"];
const FIELDS: readonly GroupField[] = ["task", "role", "turn", "model"];

/** Checks a whitening scope name. */
export function checkScope(scope: NormalizeScope, where: string): NormalizeScope {
  if (!SCOPES.includes(scope))
    throw new MasoError("RL_OPTION", `${where}: unknown normalize scope "${scope}"`, `use one of ${SCOPES.join(", ")}`);
  return scope;
}

/** γ, λ and the whitening scope/eps for GAE-style estimators. */
export function discountOptions(
  o: EstimatorOptions,
  where: string,
  defaults: { gamma: number; lambda: number; normalize: NormalizeScope },
) {
  return {
    gamma: checkOption("gamma", o.gamma ?? defaults.gamma, where, 0, 1),
    lambda: checkOption("lambda", o.lambda ?? defaults.lambda, where, 0, 1),
    normalize: checkScope(o.normalize ?? defaults.normalize, where),
    eps: checkOption("eps", o.eps ?? 1e-8, where, 0),
  };
}

/** Group fields for group-baseline estimators. */
export function groupFields(o: EstimatorOptions, where: string): readonly GroupField[] {
  const fields = o.groupBy ?? ["task", "role", "turn"];
  for (const f of fields)
    if (!FIELDS.includes(f)) throw new MasoError("RL_OPTION", `${where}: unknown group field "${f}"`, `use ${FIELDS.join(", ")}`);
  return fields;
}
