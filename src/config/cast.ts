// Checks a cast (role -> model[/adapter]) against the workflow's roles and the declared models:
// every role mapped, no unknown role, every model and adapter declared. Returns the resolved
// mapping; never loads a model.
import { type ConfigIssue, configError } from "./issues.js";
import type { RunConfig } from "./run-config.js";

/** Where one role's calls go. */
export interface CastEntry {
  model: string;
  /** LoRA adapter on that model, or null for the base weights */
  adapter: string | null;
}

type CastIssue = ConfigIssue & { code: string };

/**
 * The models a cast is checked against; null for a declared model that is itself invalid (roles
 * cast onto it are not judged). Cast entries may likewise be null: present but malformed.
 */
export type CastModels = Readonly<Record<string, Pick<RunConfig["models"][string], "lora"> | null>>;

/**
 * The cast's problems, all of them, and the entries that resolved. See {@link resolveCast}.
 * @example
 * const { cast, issues } = castIssues({ m: { lora: undefined } }, { planner: "m" }, ["planner"]);
 */
export function castIssues(
  declared: CastModels,
  castSpec: Readonly<Record<string, string | null>>,
  roles?: readonly string[],
): { cast: Record<string, CastEntry>; issues: CastIssue[] } {
  const config = { models: declared, cast: castSpec };
  const issues: CastIssue[] = [];
  const out: Record<string, CastEntry> = {};
  const models = Object.keys(config.models);
  const roleList = roles ? roles.join(", ") : "";
  for (const [role, target] of Object.entries(config.cast)) {
    if (roles && !roles.includes(role)) {
      issues.push({
        code: "CONFIG_CAST_UNKNOWN_ROLE",
        path: `cast.${role}`,
        value: target,
        expected: `no such role in the workflow; its roles are: ${roleList}`,
      });
      continue;
    }
    if (target === null) continue; // present but malformed: the schema reported it
    const [model, adapter = null] = target.split("/");
    const spec = config.models[model];
    if (spec === null) continue;
    if (!spec) {
      issues.push({
        code: "CONFIG_CAST_UNKNOWN_MODEL",
        path: `cast.${role}`,
        value: target,
        expected: `a declared model (${models.join(", ")}), optionally /adapter`,
      });
      continue;
    }
    const adapters = spec.lora?.adapters ?? [];
    if (adapter !== null && !adapters.includes(adapter)) {
      issues.push({
        code: "CONFIG_CAST_UNKNOWN_ADAPTER",
        path: `cast.${role}`,
        value: target,
        expected: adapters.length
          ? `an adapter of model ${model}: ${adapters.map((a) => `${model}/${a}`).join(", ")}`
          : `model ${model} has no LoRA adapters; use "${model}" or add models.${model}.lora`,
      });
      continue;
    }
    if (adapter === null && adapters.length > 1) {
      issues.push({
        code: "CONFIG_CAST_NEEDS_ADAPTER",
        path: `cast.${role}`,
        value: target,
        expected: `model ${model} has several adapters; name one: ${adapters.map((a) => `${model}/${a}`).join(", ")}`,
      });
      continue;
    }
    out[role] = { model, adapter: adapter ?? (adapters.length === 1 ? adapters[0] : null) };
  }
  for (const role of roles ?? []) {
    if (!(role in config.cast))
      issues.push({
        code: "CONFIG_CAST_UNMAPPED_ROLE",
        path: `cast.${role}`,
        value: undefined,
        expected: `a model for role ${role} (declared models: ${models.join(", ")})`,
      });
  }
  return { cast: out, issues };
}

/** The hint of cast errors. */
export const CAST_HINT = "map every workflow role to a declared model, and nothing else";

/**
 * Resolves and checks the cast. `roles` are the workflow's role names (omit to skip the role checks).
 * Errors (MasoError, all issues listed; code of the first): CONFIG_CAST_UNKNOWN_ROLE,
 * CONFIG_CAST_UNMAPPED_ROLE, CONFIG_CAST_UNKNOWN_MODEL, CONFIG_CAST_UNKNOWN_ADAPTER,
 * CONFIG_CAST_NEEDS_ADAPTER.
 * @example
 * resolveCast({ models: { m: { preset: "tiny" } }, cast: { planner: "m" } } as RunConfig, ["planner"]);
 */
export function resolveCast(
  config: Pick<RunConfig, "models" | "cast">,
  roles?: readonly string[],
  source = "config",
): Record<string, CastEntry> {
  const { cast, issues } = castIssues(config.models, config.cast, roles);
  if (issues.length > 0) throw configError(issues[0].code, `${source}: invalid cast`, issues, CAST_HINT);
  return cast;
}
