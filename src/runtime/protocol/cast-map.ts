// The cast as the controller sees it: which model (and which LoRA adapter on it) serves each
// logical role, for every sharing shape — one model for all roles, groups, one model per role, one
// base with an adapter per role or group. Plain data and validation; no weights, no model loading.
import { type CastEntry, type CastProblem, castProblems } from "../../config/cast-check.js";
import { MasoError } from "../../errors.js";
import { type Workflow, workflowRoles } from "../../workflow/graph-types.js";

export type { CastEntry } from "../../config/cast-check.js";

/** How a model's parameters train. */
export type TrainMode = "full" | "lora" | "frozen";

/** What the cast and the controller read of a model declaration: its name, how it trains, whether it takes LoRA adapters and has a critic. */
export interface CastModel {
  readonly name: string;
  readonly train: TrainMode;
  readonly lora?: object;
  readonly valueHead?: object;
}

/** How a role names where it is served: a model, and optionally an adapter on it. */
export interface CastTarget {
  model: string;
  adapter?: string;
}

/** role → model name, or role → { model, adapter }. */
export type CastSpec = Readonly<Record<string, string | CastTarget>>;

/** A validated cast over models described by `M` (the worker side's declarations carry more). */
export interface CastMap<M extends CastModel = CastModel> {
  readonly models: ReadonlyMap<string, M>;
  /** role → model and adapter (null = the model's base weights). */
  readonly roles: ReadonlyMap<string, CastEntry>;
  /** Roles served by a model, in cast order. */
  rolesServedBy(model: string): string[];
  /** Distinct adapters a model must hold. */
  adaptersOf(model: string): string[];
}

/**
 * Validates a cast against the models and the workflow's roles. Errors name the role, model or
 * adapter at fault and list what is allowed.
 *
 * @example
 * const cast = defineCastMap({ models: [{ name: "policy", train: "full" }], roles: ["plan", "answer"], cast: shareAll("policy", ["plan", "answer"]) });
 */
export function defineCastMap<M extends CastModel>(opts: { models: Iterable<M>; roles: readonly string[]; cast: CastSpec }): CastMap<M> {
  const models = new Map<string, M>();
  for (const m of opts.models) {
    if (models.has(m.name)) throw new MasoError("CAST_INVALID", `model "${m.name}" is declared twice`, "give each model a unique name");
    models.set(m.name, m);
  }
  // untyped callers may pass anything; a target without a string model is an undeclared model
  const targets = Object.fromEntries(
    Object.entries(opts.cast).map(([role, raw]) => {
      const t = typeof raw === "string" ? { model: raw } : (raw as Partial<CastTarget> | null | undefined);
      return [role, { model: t?.model, adapter: t?.adapter }];
    }),
  );
  // a LoRA model takes any well-formed adapter name (created on use); a model without LoRA none
  const lookup = (name: string) => {
    const m = models.get(name);
    return m && { adapters: m.lora ? ("open" as const) : [] };
  };
  const { cast, problems } = castProblems(targets, lookup, opts.roles);
  if (problems.length > 0) throw castError(problems, opts.roles, [...models.keys()]);
  const roles: ReadonlyMap<string, CastEntry> = new Map(Object.entries(cast));
  const rolesServedBy = (model: string) => [...roles].filter(([, e]) => e.model === model).map(([r]) => r);
  const adaptersOf = (model: string) => [
    ...new Set([...roles.values()].filter((e) => e.model === model && e.adapter !== null).map((e) => e.adapter as string)),
  ];
  return { models, roles, rolesServedBy, adaptersOf };
}

/** The first cast problem as a CAST_INVALID error (an unmapped role lists every unmapped one). */
function castError(problems: readonly CastProblem[], roles: readonly string[], models: readonly string[]): MasoError {
  const p = problems[0];
  const modelNames = models.join(", ") || "(none declared)";
  const fail = (message: string, hint: string) => new MasoError("CAST_INVALID", message, hint);
  switch (p.kind) {
    case "unknown-role":
      return fail(`cast maps role "${p.role}", which the workflow does not have`, `roles are: ${roles.join(", ")}`);
    case "unknown-model":
      return fail(`cast.${p.role}.model is "${String(p.model)}", which is not declared`, `declared models: ${modelNames}`);
    case "no-adapters":
      return fail(
        `cast.${p.role}.adapter is "${String(p.adapter)}" but model "${p.model}" has no LoRA settings`,
        `add lora: { rank, alpha, targets } to model "${p.model}", or drop the adapter`,
      );
    case "unknown-adapter": // runtime adapter lists are open or empty; kept for completeness
      return fail(`cast.${p.role}.adapter is not an adapter of model "${p.model}"`, `adapters: ${p.adapters.join(", ")}`);
    case "needs-adapter":
      return fail(`cast.${p.role} names no adapter but model "${p.model}" has several`, `adapters: ${p.adapters.join(", ")}`);
    case "bad-adapter-name":
      return fail(`cast.${p.role}.adapter "${String(p.adapter)}" is not a valid name`, "use letters, digits, _ . -");
    case "unmapped-role": {
      const missing = problems.filter((q) => q.kind === "unmapped-role").map((q) => q.role);
      return fail(`roles left unmapped: ${missing.join(", ")}`, `map each to one of: ${modelNames}`);
    }
  }
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
