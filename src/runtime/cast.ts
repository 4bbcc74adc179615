// The cast: which physical model (and which LoRA adapter on it) serves each logical role. Supports
// every sharing shape — one model for all roles, groups, one model per role, one base with an
// adapter per role or group. Pure validation and lookup; it never loads weights.
import { MasoError } from "../errors.js";
import { type Workflow, workflowRoles } from "../workflow/graph-types.js";
import { type ModelSpec, type ResolvedModelSpec, resolveModelSpec } from "./models.js";

/** Where one role is served: a model, and optionally an adapter on it. */
export interface CastEntry {
  model: string;
  adapter?: string;
}

/** role → model name, or role → { model, adapter }. */
export type CastSpec = Readonly<Record<string, string | CastEntry>>;

/** A validated cast. */
export interface Cast {
  readonly models: ReadonlyMap<string, ResolvedModelSpec>;
  /** role → model and adapter (null = the model's base weights). */
  readonly roles: ReadonlyMap<string, { model: string; adapter: string | null }>;
  /** Roles served by a model, in cast order. */
  rolesOf(model: string): string[];
  /** Distinct adapters a model must hold. */
  adaptersOf(model: string): string[];
}

/**
 * Validates a cast against the declared models and the workflow's roles. Errors name the role,
 * model or adapter at fault and list what is allowed.
 *
 * @example
 * const cast = defineCast({ models: [policy], roles: rolesOf(wf), cast: shareAll("policy", rolesOf(wf)) });
 */
export function defineCast(opts: { models: readonly ModelSpec[]; roles: readonly string[]; cast: CastSpec }): Cast {
  const models = new Map<string, ResolvedModelSpec>();
  for (const m of opts.models) {
    const r = resolveModelSpec(m);
    if (models.has(r.name)) throw new MasoError("CAST_INVALID", `model "${r.name}" is declared twice`, "give each model a unique name");
    models.set(r.name, r);
  }
  const known = new Set(opts.roles);
  const modelNames = [...models.keys()].join(", ") || "(none declared)";
  const roles = new Map<string, { model: string; adapter: string | null }>();
  for (const [role, raw] of Object.entries(opts.cast)) {
    if (!known.has(role))
      throw new MasoError(
        "CAST_INVALID",
        `cast maps role "${role}", which the workflow does not have`,
        `roles are: ${opts.roles.join(", ")}`,
      );
    const entry: CastEntry = typeof raw === "string" ? { model: raw } : raw;
    const model = models.get(entry?.model);
    if (!model)
      throw new MasoError(
        "CAST_INVALID",
        `cast.${role}.model is "${String(entry?.model)}", which is not declared`,
        `declared models: ${modelNames}`,
      );
    const adapter = entry.adapter ?? null;
    if (adapter !== null) {
      if (!model.lora)
        throw new MasoError(
          "CAST_INVALID",
          `cast.${role}.adapter is "${adapter}" but model "${model.name}" has no LoRA settings`,
          `add lora: { rank, alpha, targets } to model "${model.name}", or drop the adapter`,
        );
      if (typeof adapter !== "string" || !/^[A-Za-z0-9_.-]+$/.test(adapter))
        throw new MasoError("CAST_INVALID", `cast.${role}.adapter "${String(adapter)}" is not a valid name`, "use letters, digits, _ . -");
    }
    roles.set(role, { model: model.name, adapter });
  }
  const missing = opts.roles.filter((r) => !roles.has(r));
  if (missing.length > 0)
    throw new MasoError("CAST_INVALID", `roles left unmapped: ${missing.join(", ")}`, `map each to one of: ${modelNames}`);
  const rolesOf = (model: string) => [...roles].filter(([, e]) => e.model === model).map(([r]) => r);
  const adaptersOf = (model: string) => [
    ...new Set([...roles.values()].filter((e) => e.model === model && e.adapter !== null).map((e) => e.adapter as string)),
  ];
  return { models, roles, rolesOf, adaptersOf };
}

/**
 * The role names of a workflow's role nodes (each once).
 *
 * @example
 * rolesOf(wf); // ["decompose", "answer"]
 */
export function rolesOf<S>(wf: Workflow<S, string>): string[] {
  return workflowRoles(wf);
}

/**
 * Shape 1: every role on one model.
 *
 * @example
 * shareAll("policy", ["plan", "answer"]); // { plan: "policy", answer: "policy" }
 */
export function shareAll(model: string, roles: readonly string[]): CastSpec {
  return Object.fromEntries(roles.map((r) => [r, model]));
}

/**
 * Shapes 2 and 3: groups of roles per model (a group of one = one model per role).
 *
 * @example
 * byGroup({ small: ["search", "summarize"], big: ["answer"] });
 */
export function byGroup(groups: Readonly<Record<string, readonly string[]>>): CastSpec {
  return Object.fromEntries(Object.entries(groups).flatMap(([model, roles]) => roles.map((r) => [r, model])));
}

/**
 * Shape 4: one frozen base with one LoRA adapter per role, or per named group of roles.
 *
 * @example
 * adapterPerRole("base", ["reasoner", "actor"]);          // adapters "reasoner" and "actor"
 * adapterPerRole("base", { qa: ["decompose", "answer"] }); // one adapter "qa" for both
 */
export function adapterPerRole(model: string, roles: readonly string[] | Readonly<Record<string, readonly string[]>>): CastSpec {
  const groups: Record<string, readonly string[]> = Array.isArray(roles)
    ? Object.fromEntries((roles as readonly string[]).map((r) => [r, [r]]))
    : (roles as Readonly<Record<string, readonly string[]>>);
  return Object.fromEntries(Object.entries(groups).flatMap(([adapter, rs]) => rs.map((r) => [r, { model, adapter }])));
}
