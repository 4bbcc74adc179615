// One line of metrics.jsonl from a controller step: the step report's per-role figures (training and
// rollout, in their row view), episode counts, tokens and timings. Wall-clock figures go under
// `timings` so everything else is reproducible for a seed.
import type { MetricValues, MetricsRow } from "../progress/metrics-writer.js";
import { roleRows } from "../progress/role-rows.js";
import type { StepReport } from "../runtime/controller/controller.js";
import { failureCounts } from "../runtime/controller/step-failures.js";
import type { CollapseWarning } from "./collapse-detect.js";
import type { RollbackEntry } from "./role-rollback.js";
import { type SignalWarning, signalWarnings } from "./signal-warnings.js";

/**
 * One line of metrics.jsonl. Everything outside `timings` and `time` is deterministic for a seed,
 * except under free-running asynchronous RL, where which weights a rollout read follows timing.
 */
export interface TrainRow extends MetricsRow {
  step: number;
  epoch: number;
  /** `failures`: failed episodes by error code, present only when some failed. */
  episodes: { count: number; rewarded: number; failed: number; metrics: Record<string, number>; failures?: Record<string, number> };
  tokens: number;
  roles: Record<string, MetricValues>;
  eval?: { metric: number; episodes: number };
  /**
   * Why the step could not teach anything, or which role is collapsing (collapse-detect.ts), with
   * what to do; present only when there is something to say.
   */
  warnings?: (SignalWarning | CollapseWarning)[];
  /** Per model-scored reward rule: calls, failures, cache hits, mean score, agreement with a metric. */
  judges?: Record<string, MetricValues>;
  /** Roles rolled back to a checkpoint after this step (`failures.onCollapse: "rollback"`). */
  rollback?: RollbackEntry[];
  /** Asynchronous RL only: which weights this step's rollout and the rollouts in flight beside it read. */
  pipeline?: PipelineRow;
  timings: MetricValues;
}

/**
 * Under asynchronous RL, the weights each rollout reads, by the step they hold (0: the weights the
 * run started with): under a fixed lag set by step numbers, so reproducible like the rest of the row;
 * free-running, set by timing.
 */
export interface PipelineRow extends MetricValues {
  /** This step's samples were generated with the weights after step `weights`. */
  weights: number;
  /**
   * `ahead.<k>`: the rollout of step n+k ran while this step trained, with the weights after step
   * `ahead.<k>` (free-running: only rollouts already generating, the others have not chosen yet).
   */
  ahead: Record<string, number>;
}

/** The metrics row of step `step` (in `epoch`), from the step's report and its one reward pass; `pipeline` under asynchronous RL. */
export function stepRow<S>(step: number, epoch: number, report: StepReport<S>, pipeline?: PipelineRow): TrainRow {
  const { rewards } = report;
  let tokens = 0;
  for (const t of report.trajectories) for (const r of t.records) tokens += (r.promptTokens ?? 0) + (r.outputTokens ?? 0);
  // wall-clock episode figures (durationMs, …) go to timings so everything else stays reproducible
  const clock = Object.entries(report.episodes.metrics).filter(([k]) => k.endsWith("Ms"));
  const episodeMetrics = Object.fromEntries(Object.entries(report.episodes.metrics).filter(([k]) => !k.endsWith("Ms")));
  const failures = rewards.failures.length > 0 ? { failures: failureCounts(rewards.failures) } : {};
  const warnings = signalWarnings(step, report);
  return {
    step,
    epoch,
    episodes: { ...report.episodes, metrics: episodeMetrics, ...failures },
    tokens,
    roles: roleRows(report.roles),
    ...(warnings.length > 0 && { warnings }),
    ...(Object.keys(report.judges ?? {}).length > 0 && { judges: judgeRows(report.judges) }),
    ...(pipeline && { pipeline }),
    timings: {
      stepMs: report.timings.stepMs,
      generationMs: report.timings.generationMs,
      controllerMs: report.timings.controllerMs,
      episodesPerSecond: report.episodes.count / (report.timings.stepMs / 1000),
      tokensPerSecond: tokens / (report.timings.stepMs / 1000),
      phases: report.timings.phases,
      episodes: Object.fromEntries(clock),
      workers: workerShares(report.workers),
    },
  };
}

/**
 * Per worker group, each operation's busy time as a share of the group's window (`<op>Share`), and
 * `idleShare`: what no operation accounts for. Operations that overlap (generation during an update
 * under asynchronous RL, several generation lanes) each count in full, so their shares may add up
 * past 1 and `idleShare` is then a lower bound (0 at least).
 */
function workerShares(workers: StepReport<unknown>["workers"]): Record<string, MetricValues> {
  return Object.fromEntries(
    Object.entries(workers).map(([g, w]) => {
      const share = (ms: number) => (w.windowMs > 0 ? ms / w.windowMs : 0);
      const ops = Object.entries(w.busyMs).filter(([, ms]) => ms > 0);
      const busy = ops.reduce((a, [, ms]) => a + share(ms), 0);
      return [g, { ...Object.fromEntries(ops.map(([op, ms]) => [`${op}Share`, share(ms)])), idleShare: Math.max(0, 1 - busy) }];
    }),
  );
}

/** Judge stats as metric values (a NaN mean or correlation, where nothing parsed or a side was constant, is left out). */
function judgeRows(judges: StepReport<unknown>["judges"]): Record<string, MetricValues> {
  return Object.fromEntries(
    Object.entries(judges).map(([rule, st]) => [rule, Object.fromEntries(Object.entries(st).filter(([, v]) => Number.isFinite(v)))]),
  );
}
