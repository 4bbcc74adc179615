// One line of metrics.jsonl from a controller step: the controller's per-role training figures
// merged with the rollout's (lengths, format failures, reward by kind), episode counts, tokens and
// timings. Wall-clock figures go under `timings` so everything else is reproducible for a seed.
import type { MetricValues, MetricsRow } from "../progress/metrics-writer.js";
import { roleMetrics as rolloutRoleMetrics } from "../progress/role-metrics.js";
import type { StepReport } from "../runtime/controller.js";
import { failureCounts } from "../runtime/step-failures.js";
import type { RoleStepMetrics } from "../runtime/step-metrics.js";
import type { Trajectory } from "../workflow/trajectory.js";

/** One line of metrics.jsonl. Everything outside `timings` and `time` is deterministic for a seed. */
export interface TrainRow extends MetricsRow {
  step: number;
  epoch: number;
  /** `failures`: failed episodes by error code, present only when some failed. */
  episodes: { count: number; rewarded: number; failed: number; metrics: Record<string, number>; failures?: Record<string, number> };
  tokens: number;
  roles: Record<string, MetricValues>;
  eval?: { metric: number; episodes: number };
  timings: MetricValues;
}

/** The controller's per-role metrics merged with the rollout's (lengths, format failures, reward by kind). */
function roleRow(report: RoleStepMetrics | undefined, rollout: MetricValues | undefined): MetricValues {
  const r = report;
  const base: MetricValues = { ...rollout };
  if (!r) return base;
  return {
    ...base,
    reward: { total: r.reward, ...r.rewardByKind },
    samples: r.samples,
    advantage: { mean: r.advantageMean, std: r.advantageStd },
    entropy: r.entropy,
    kl: { ref: r.klRef, approx: r.approxKl },
    clipFrac: r.clipFrac,
    gradNorm: r.gradNorm,
    length: { response: r.responseLength, ...(rollout?.promptLength !== undefined && { prompt: rollout.promptLength as number }) },
    value: { loss: r.valueLoss, explainedVariance: r.explainedVariance },
    updated: r.updated ? 1 : 0,
    skippedMinibatches: r.skippedMinibatches,
  };
}

/** The metrics row of step `step` (in `epoch`), from the step's report and its one reward pass. */
export function stepRow<S>(step: number, epoch: number, report: StepReport<S>): TrainRow {
  const { rewards } = report;
  const rollout = rolloutRoleMetrics(report.trajectories as Trajectory[], rewards.episodes);
  const roles: Record<string, MetricValues> = {};
  for (const role of new Set([...Object.keys(report.roles), ...Object.keys(rollout)]).values())
    roles[role] = roleRow(report.roles[role], rollout[role]);
  let tokens = 0;
  for (const t of report.trajectories) for (const r of t.records) tokens += (r.promptTokens ?? 0) + (r.outputTokens ?? 0);
  // wall-clock episode figures (durationMs, …) go to timings so everything else stays reproducible
  const clock = Object.entries(report.episodes.metrics).filter(([k]) => k.endsWith("Ms"));
  const episodeMetrics = Object.fromEntries(Object.entries(report.episodes.metrics).filter(([k]) => !k.endsWith("Ms")));
  const failures = rewards.failures.length > 0 ? { failures: failureCounts(rewards.failures) } : {};
  return {
    step,
    epoch,
    episodes: { ...report.episodes, metrics: episodeMetrics, ...failures },
    tokens,
    roles,
    timings: {
      stepMs: report.timings.stepMs,
      generationMs: report.timings.generationMs,
      controllerMs: report.timings.controllerMs,
      episodesPerSecond: report.episodes.count / (report.timings.stepMs / 1000),
      tokensPerSecond: tokens / (report.timings.stepMs / 1000),
      phases: report.timings.phases,
      episodes: Object.fromEntries(clock),
    },
  };
}
