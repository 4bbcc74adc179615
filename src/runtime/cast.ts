// The cast with its model declarations: what `defineCast` returns and `createRuntime` builds worker
// groups from. The role→model description itself is plain data (cast-map.ts) that the controller
// reads; this file joins it to the worker side's declarations, so it sits where both sides are wired.
import { type CastMap, type CastSpec, defineCastMap } from "./protocol/cast-map.js";
import { type ModelSpec, type ResolvedModelSpec, resolveModelSpec } from "./worker-group/models.js";

/** A validated cast whose models are full declarations (weights source, LoRA, critic, precision). */
export type Cast = CastMap<ResolvedModelSpec>;

/**
 * Validates a cast against the declared models and the workflow's roles. Errors name the role,
 * model or adapter at fault and list what is allowed.
 *
 * @example
 * const cast = defineCast({ models: [policy], roles: rolesOf(wf), cast: shareAll("policy", rolesOf(wf)) });
 */
export function defineCast(opts: { models: readonly ModelSpec[]; roles: readonly string[]; cast: CastSpec }): Cast {
  return defineCastMap({ models: resolvedOneByOne(opts.models), roles: opts.roles, cast: opts.cast });
}

/** Resolves declarations as the cast reads them, so a duplicate name is reported before a later model's own error. */
function* resolvedOneByOne(specs: readonly ModelSpec[]): Iterable<ResolvedModelSpec> {
  for (const s of specs) yield resolveModelSpec(s);
}
