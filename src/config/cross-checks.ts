// Checks across fields that no single field's schema can see: the cast against the workflow's
// roles and the models, duplicate adapter and model names, per-role sampling of unknown roles,
// value heads for critic estimators, episodes per step, reward weights naming no reward function,
// and a collapse rollback over NATS. Runs on whatever sections of the input parse on their own, so a
// config with schema errors still gets every other problem reported at once. Returns issues; never throws.
import { type CastEntry, castIssues } from "./cast.js";
import type { ConfigIssue } from "./issues.js";
import { CRITIC_ESTIMATORS, MAX_EPISODES_PER_STEP, modelSchema, runConfigSchema } from "./run-config.js";

export interface CrossCheckOptions {
  /** the workflow's role names (omit to skip the checks that need them) */
  roles?: readonly string[];
  /** the workflow module's reward function names (omit to skip the rewardWeights check) */
  rewards?: readonly string[];
}

type Raw = Record<string, unknown>;
type Model = ReturnType<typeof modelSchema.parse>;

const isRecord = (v: unknown): v is Raw => v !== null && typeof v === "object" && !Array.isArray(v);
const shape = runConfigSchema.shape;

/**
 * What asynchronous RL (schedule.maxStaleness ≥ 1) cannot run with: a rollback rewrites weights a
 * pinned rollout may still read, and data-parallel ranks would each need the pinned version.
 */
function asyncIssues(failures: { onCollapse: string } | undefined, runtime: { nats: { ranks: number } } | undefined): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  if (failures?.onCollapse === "rollback")
    out.push({
      code: "CONFIG_ASYNC",
      path: "failures.onCollapse",
      value: "rollback",
      expected: '"warn" or "stop" with schedule.maxStaleness ≥ 1: a rollback rewrites weights that a rollout running ahead still reads',
    });
  if ((runtime?.nats.ranks ?? 1) > 1)
    out.push({
      code: "CONFIG_ASYNC",
      path: "runtime.nats.ranks",
      value: runtime!.nats.ranks,
      expected: "1 with schedule.maxStaleness ≥ 1: data-parallel ranks do not pin weight versions yet",
    });
  return out;
}

/** A top-level section parsed alone (its defaults applied), or undefined when it does not parse. */
const parsed = <T>(r: { success: true; data: T } | { success: false }): T | undefined => (r.success ? r.data : undefined);

/** Names that differ only in letter case (their checkpoint folders collide on case-insensitive file systems). */
function caseCollisions(names: readonly string[]): [string, string][] {
  const seen = new Map<string, string>();
  const out: [string, string][] = [];
  for (const n of names) {
    const prev = seen.get(n.toLowerCase());
    if (prev !== undefined) out.push([prev, n]);
    else seen.set(n.toLowerCase(), n);
  }
  return out;
}

function modelIssues(models: Record<string, Model | null>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [a, b] of caseCollisions(Object.keys(models)))
    issues.push({
      code: "CONFIG_DUPLICATE_MODEL",
      path: `models.${b}`,
      value: b,
      expected: `a model name that differs from "${a}" by more than letter case (each model is saved in a folder named after it)`,
    });
  for (const [name, m] of Object.entries(models)) {
    const adapters = m?.lora?.adapters ?? [];
    adapters.forEach((a, i) => {
      const first = adapters.findIndex((x) => x.toLowerCase() === a.toLowerCase());
      if (first === i) return;
      issues.push({
        code: "CONFIG_DUPLICATE_ADAPTER",
        path: `models.${name}.lora.adapters[${i}]`,
        value: a,
        expected:
          adapters[first] === a
            ? `each adapter once; "${a}" is already adapters[${first}] (roles that share an adapter name it in the cast)`
            : `an adapter name that differs from "${adapters[first]}" (adapters[${first}]) by more than letter case`,
      });
    });
  }
  return issues;
}

/**
 * Every cross-field problem of `input` (a raw, possibly invalid config) and the cast entries that
 * resolved. Issue codes: CONFIG_CAST_* (see cast.ts), CONFIG_DUPLICATE_MODEL,
 * CONFIG_DUPLICATE_ADAPTER, CONFIG_REWARD_WEIGHT, CONFIG_ROLLBACK_NATS; plain CONFIG_INVALID issues carry no code.
 * @example
 * const { issues } = crossCheck(raw, { roles: ["planner", "answer"], rewards: ["format", "outcome"] });
 */
export function crossCheck(input: unknown, opts: CrossCheckOptions = {}): { issues: ConfigIssue[]; cast: Record<string, CastEntry> } {
  const issues: ConfigIssue[] = [];
  if (!isRecord(input)) return { issues, cast: {} };
  const models: Record<string, Model | null> = {};
  if (isRecord(input.models))
    for (const [name, m] of Object.entries(input.models)) {
      const r = modelSchema.safeParse(m);
      models[name] = r.success ? r.data : null;
    }
  issues.push(...modelIssues(models));

  let cast: Record<string, CastEntry> = {};
  if (isRecord(input.models) && isRecord(input.cast)) {
    const entry = shape.cast._zod.def.valueType;
    const spec = Object.fromEntries(
      Object.entries(input.cast).map(([role, t]) => [role, entry.safeParse(t).success ? (t as string) : null]),
    );
    const r = castIssues(models, spec, opts.roles);
    issues.push(...r.issues);
    cast = r.cast;
  }

  const roles = opts.roles;
  const sampling = input.sampling;
  if (roles && isRecord(sampling) && isRecord(sampling.roles))
    for (const [role, v] of Object.entries(sampling.roles))
      if (!roles.includes(role))
        issues.push({ path: `sampling.roles.${role}`, value: v, expected: `a workflow role (${roles.join(", ")})` });

  const algorithm = parsed(shape.algorithm.safeParse(input.algorithm));
  if (algorithm && CRITIC_ESTIMATORS.includes(algorithm.estimator)) {
    const used = [...new Set(Object.values(cast).map((e) => e.model))];
    for (const m of used.filter((m) => models[m] && !models[m].valueHead))
      issues.push({
        path: `models.${m}.valueHead`,
        value: undefined,
        expected: `a value head ({ hidden: 64 }): algorithm.estimator ${algorithm.estimator} needs a critic`,
      });
  }

  const schedule = parsed(shape.schedule.safeParse(input.schedule));
  if (algorithm && schedule && schedule.tasksPerStep * algorithm.groupSize > MAX_EPISODES_PER_STEP)
    issues.push({
      path: "schedule.tasksPerStep",
      value: schedule.tasksPerStep,
      expected: `at most ${MAX_EPISODES_PER_STEP} episodes per step: tasksPerStep × algorithm.groupSize (${algorithm.groupSize}) is ${schedule.tasksPerStep * algorithm.groupSize}`,
    });

  const failures = parsed(shape.failures.safeParse(input.failures));
  const runtime = parsed(shape.runtime.safeParse(input.runtime));
  if (failures?.onCollapse === "rollback" && runtime?.transport === "nats")
    issues.push({
      code: "CONFIG_ROLLBACK_NATS",
      path: "failures.onCollapse",
      value: "rollback",
      expected:
        '"warn" or "stop" with runtime.transport "nats": a rollback restores a role\'s weights inside its worker group, which only the in-process transport offers',
    });

  if (schedule && schedule.maxStaleness > 0) issues.push(...asyncIssues(failures, runtime));
  if (schedule?.asyncMode === "free" && schedule.maxStaleness === 0)
    issues.push({
      code: "CONFIG_ASYNC",
      path: "schedule.asyncMode",
      value: "free",
      expected: '"fixed-lag" (the default), or schedule.maxStaleness ≥ 1: a synchronous run has no rollout running ahead',
    });

  const rewards = opts.rewards;
  if (rewards && isRecord(input.rewardWeights))
    for (const [name, w] of Object.entries(input.rewardWeights))
      if (!rewards.includes(name))
        issues.push({
          code: "CONFIG_REWARD_WEIGHT",
          path: `rewardWeights.${name}`,
          value: w,
          expected: `the name of one of the workflow module's reward functions: ${rewards.join(", ")}`,
        });
  return { issues, cast };
}
