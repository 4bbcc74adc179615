// Checks a cast (role -> model[/adapter]) against the workflow's roles and the declared models:
// every role mapped, no unknown role, every model and adapter declared. Returns the resolved
// mapping; never loads a model. The walk itself is cast-check.ts, shared with the runtime.
import type { ErrorCode } from "../error-codes.js";
import { type CastEntry, type CastProblem, castProblems } from "./cast-check.js";
import { type ConfigIssue, configError } from "./issues.js";
import type { RunConfig } from "./run-config.js";

export type { CastEntry } from "./cast-check.js";

type CastIssue = ConfigIssue & { code: ErrorCode };

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
  const targets = Object.fromEntries(
    Object.entries(castSpec).map(([role, t]) => {
      if (t === null) return [role, null];
      const [model, adapter = null] = t.split("/");
      return [role, { model, adapter }];
    }),
  );
  const lookup = (name: string) => {
    const spec = declared[name];
    return spec === null ? null : spec ? { adapters: spec.lora?.adapters ?? [] } : undefined;
  };
  const { cast, problems } = castProblems(targets, lookup, roles);
  const models = Object.keys(declared);
  const issue = (p: CastProblem) => castIssue(p, castSpec[p.role], models, roles ?? []);
  return { cast, issues: problems.map(issue) };
}

/** One cast problem as a config issue; `value` is the role's cast string. */
function castIssue(p: CastProblem, value: string | null | undefined, models: readonly string[], roles: readonly string[]): CastIssue {
  const at = { path: `cast.${p.role}`, value };
  const listed = (model: string, adapters: readonly string[]) => adapters.map((a) => `${model}/${a}`).join(", ");
  switch (p.kind) {
    case "unknown-role":
      return { code: "CONFIG_CAST_UNKNOWN_ROLE", ...at, expected: `no such role in the workflow; its roles are: ${roles.join(", ")}` };
    case "unknown-model":
      return { code: "CONFIG_CAST_UNKNOWN_MODEL", ...at, expected: `a declared model (${models.join(", ")}), optionally /adapter` };
    case "no-adapters":
      return {
        code: "CONFIG_CAST_UNKNOWN_ADAPTER",
        ...at,
        expected: `model ${p.model} has no LoRA adapters; use "${p.model}" or add models.${p.model}.lora`,
      };
    case "bad-adapter-name": // only open adapter lists check names; config lists are fixed
      return { code: "CONFIG_CAST_UNKNOWN_ADAPTER", ...at, expected: "an adapter name of letters, digits, _ . -" };
    case "unknown-adapter":
      return { code: "CONFIG_CAST_UNKNOWN_ADAPTER", ...at, expected: `an adapter of model ${p.model}: ${listed(p.model, p.adapters)}` };
    case "needs-adapter":
      return {
        code: "CONFIG_CAST_NEEDS_ADAPTER",
        ...at,
        expected: `model ${p.model} has several adapters; name one: ${listed(p.model, p.adapters)}`,
      };
    case "unmapped-role":
      return {
        code: "CONFIG_CAST_UNMAPPED_ROLE",
        path: at.path,
        value: undefined,
        expected: `a model for role ${p.role} (declared models: ${models.join(", ")})`,
      };
  }
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
