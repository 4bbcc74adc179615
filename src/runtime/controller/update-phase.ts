// Phase 5 of a step: the updates, in MARFT's order — all agents together, one agent per step in
// round-robin, or HAPPO's sequence where each next agent's advantages are scaled by the product of
// the ratios π_new/π_old of the agents updated before it (per-episode scalars carried here).
import { accumulateHappoFactors } from "../../rl/advantages/happo.js";
import type { RoleUpdateMetrics, UpdateReport } from "../../rl/update/types.js";
import { createRng } from "../../rng.js";
import type { UpdateRequest, UpdateResponse } from "../protocol/messages.js";
import { type StepContext, scopeOf } from "./step-context.js";

/** Per-role update figures: policy terms from the policy update, value terms from the critic update. */
export type RoleUpdates = Record<string, { policy?: RoleUpdateMetrics; critic?: RoleUpdateMetrics }>;

function record(out: RoleUpdates, report: UpdateReport, kind: "policy" | "critic"): void {
  for (const [role, m] of Object.entries(report.roles)) (out[role] ??= {})[kind] = m;
}

function trainable<S extends object, T>(ctx: StepContext<S, T>): { groups: string[]; critics: string[] } {
  const models = [...ctx.o.cast.models.values()].filter((m) => m.train !== "frozen");
  return { groups: models.map((m) => m.name), critics: models.filter((m) => m.valueHead).map((m) => m.name) };
}

/** The agents to update this step, in order. */
function agentsThisStep<S extends object, T>(ctx: StepContext<S, T>, groups: readonly string[]): string[] {
  const { o } = ctx;
  const agents = o.agentOrder.filter((r) => groups.includes(o.cast.roles.get(r)!.model));
  if (o.updateOrder === "round-robin") return agents.length ? [agents[ctx.step % agents.length]] : [];
  if (o.happo?.order === "random") return createRng(o.seed * 31 + ctx.step).shuffle(agents);
  return agents;
}

/** One update call, scoped to the step's batch; under asynchronous RL it notes the group's new weight version. */
async function updateCall<S extends object, T>(ctx: StepContext<S, T>, group: string, req: UpdateRequest): Promise<UpdateResponse> {
  const res = await ctx.o.transport.call(group, "update", { ...req, ...scopeOf(ctx) });
  if (res.version !== undefined) ctx.versions?.set(group, res.version);
  return res;
}

/**
 * Runs this step's updates and returns per-role metrics.
 *
 * @example
 * const updates = await updatePhase(ctx);
 */
export async function updatePhase<S extends object, T>(ctx: StepContext<S, T>): Promise<RoleUpdates> {
  const { o } = ctx;
  const { groups, critics } = trainable(ctx);
  const out: RoleUpdates = {};
  const call = (g: string, policy: boolean, critic: boolean) => updateCall(ctx, g, { step: ctx.step, policy, critic });
  if (ctx.step < o.criticWarmupSteps) {
    for (const r of await Promise.all(critics.map((g) => call(g, false, true)))) record(out, r.report, "critic");
    return out;
  }
  if (o.updateOrder === "together") {
    const reports = await Promise.all(groups.map((g) => call(g, true, critics.includes(g))));
    reports.forEach((r, i) => {
      record(out, r.report, "policy");
      if (critics.includes(groups[i])) record(out, r.report, "critic");
    });
    return out;
  }
  for (const r of await Promise.all(critics.map((g) => call(g, false, true)))) record(out, r.report, "critic");
  const by = o.happo?.by ?? "episode";
  let factors = new Map<string, number>();
  for (const role of agentsThisStep(ctx, groups)) {
    const model = o.cast.roles.get(role)!.model;
    const happo = o.updateOrder === "happo";
    const res = await updateCall(ctx, model, {
      step: ctx.step,
      roles: [role],
      policy: true,
      critic: false,
      happo: happo ? { factors: Object.fromEntries(factors), by } : undefined,
      returnLogRatios: happo,
    });
    record(out, res.report, "policy");
    if (happo && res.logRatios) {
      // each log-ratio is keyed by its (episode, turn), all a factor reads
      factors = accumulateHappoFactors(
        factors,
        res.logRatios,
        res.logRatios.map((l) => l.logRatio),
        { by, clip: o.happo?.clip },
      );
    }
  }
  return out;
}
