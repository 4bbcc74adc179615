// The one walk over a cast (role -> model and adapter): is each role in the workflow, each model
// declared, each adapter allowed on its model, and every role mapped? It returns the problems as
// data; the config reports them all as issues, the runtime throws the first. Never loads a model.

/** Where one role's calls go: a model, and a LoRA adapter on it (null = the base weights). */
export interface CastEntry {
  model: string;
  adapter: string | null;
}

/** What the walk knows of a declared model: the adapters a role may name on it. */
export interface CastModel {
  /** a fixed list (empty: no LoRA), or "open": any well-formed name, created on use */
  readonly adapters: readonly string[] | "open";
}

/** One cast problem. Unmapped roles come after every other kind. */
export type CastProblem =
  | { kind: "unknown-role"; role: string }
  | { kind: "unknown-model"; role: string; model: unknown }
  | { kind: "no-adapters"; role: string; model: string; adapter: unknown }
  | { kind: "unknown-adapter"; role: string; model: string; adapters: readonly string[] }
  | { kind: "bad-adapter-name"; role: string; model: string; adapter: unknown }
  | { kind: "needs-adapter"; role: string; model: string; adapters: readonly string[] }
  | { kind: "unmapped-role"; role: string };

const ADAPTER_NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * Walks `cast` in order. A null target is present but malformed (its caller reported it) and is
 * skipped, as is a role cast onto a model that `model` returns null for (declared but itself
 * invalid). `roles` are the workflow's role names (omit to skip the role checks). A fixed adapter
 * list of one is the default adapter when a target names none.
 * @example
 * castProblems({ planner: { model: "m", adapter: null } }, (n) => (n === "m" ? { adapters: [] } : undefined), ["planner"]);
 */
export function castProblems(
  cast: Readonly<Record<string, { model: unknown; adapter: unknown } | null>>,
  model: (name: string) => CastModel | null | undefined,
  roles?: readonly string[],
): { cast: Record<string, CastEntry>; problems: CastProblem[] } {
  const problems: CastProblem[] = [];
  const out: Record<string, CastEntry> = {};
  for (const [role, target] of Object.entries(cast)) {
    if (roles && !roles.includes(role)) {
      problems.push({ kind: "unknown-role", role });
      continue;
    }
    if (target === null) continue;
    const name = target.model;
    const spec = typeof name === "string" ? model(name) : undefined;
    if (spec === null) continue;
    if (spec === undefined || typeof name !== "string") {
      problems.push({ kind: "unknown-model", role, model: name });
      continue;
    }
    const adapter = target.adapter ?? null;
    const fixed = spec.adapters === "open" ? null : spec.adapters;
    const problem = adapterProblem(role, name, adapter, fixed);
    if (problem) {
      problems.push(problem);
      continue;
    }
    out[role] = { model: name, adapter: (adapter as string | null) ?? (fixed?.length === 1 ? fixed[0] : null) };
  }
  for (const role of roles ?? []) if (!Object.hasOwn(cast, role)) problems.push({ kind: "unmapped-role", role });
  return { cast: out, problems };
}

/** The adapter rule: a named adapter must be on the model's list (or well-formed on an open one); none named needs a list of at most one. */
function adapterProblem(role: string, model: string, adapter: unknown, fixed: readonly string[] | null): CastProblem | null {
  if (adapter === null) return fixed && fixed.length > 1 ? { kind: "needs-adapter", role, model, adapters: fixed } : null;
  if (fixed?.length === 0) return { kind: "no-adapters", role, model, adapter };
  if (fixed) return fixed.includes(adapter as string) ? null : { kind: "unknown-adapter", role, model, adapters: fixed };
  return typeof adapter === "string" && ADAPTER_NAME.test(adapter) ? null : { kind: "bad-adapter-name", role, model, adapter };
}
