// The controller: one RL step as a dataflow — rollout → rewards → logprobs → advantages → update — each a
// named, timed phase function, plus greedy evaluation. It holds text, handles and scalars only;
// every heavy tensor stays in the worker groups behind the transport.
import type { AssignedRewards } from "../../rewards/combine.js";
import type { ModelRuleStats } from "../../rewards/model-rules.js";
import { MasoError } from "../../errors.js";
import { MAX_STALENESS } from "../../rl/update/off-policy.js";
import type { Trajectory } from "../../workflow/trajectory.js";
import type { Sampling } from "../../workflow/role.js";
import { advantagePhase } from "./advantage-phase.js";
import type { WorkerState } from "../protocol/messages.js";
import { type PhaseTimer, phaseTimer } from "./phase-timer.js";
import { rewardPhase } from "./reward-phase.js";
import { type Rollout, rolloutPhase, toolMs } from "./rollout-phase.js";
import { logprobsPhase } from "./logprobs-phase.js";
import { type ControllerOptions, resolveOptions, type StepContext, type StepItem } from "./step-context.js";
import { meanMetrics, type RoleStepMetrics, roleMetrics } from "./step-metrics.js";
import type { TrafficStats, Transport } from "../protocol/transport.js";
import { updatePhase } from "./update-phase.js";

/** How busy one worker group was during a step. */
export interface WorkerStepStats {
  busyMs: Record<string, number>;
  /** Busy time (all operations) / step wall time. */
  busyFraction: number;
  /** Mean sequences per decode step the generator saw this step. */
  meanBatch: number;
  decodeSteps: number;
  /**
   * Wall time between the group's two states this report compares (the end of the step trained
   * before and of this one): under asynchronous RL it differs from stepMs, which starts at the rollout.
   */
  windowMs: number;
}

export interface StepReport<S> {
  /** The step's number, counted from 1 as metrics rows and checkpoints count (step 0 is the untrained evaluation). */
  step: number;
  roles: Record<string, RoleStepMetrics>;
  episodes: { count: number; rewarded: number; failed: number; metrics: Record<string, number> };
  timings: {
    stepMs: number;
    /** Wall time per phase: rollout, rewards, logprobs, advantages, update, bookkeeping. */
    phases: Record<string, number>;
    /** Decode time summed over worker groups. */
    generationMs: number;
    /** Tool call time summed over calls (they overlap in wall time). */
    toolsMs: number;
    /** Controller-side work: routing, message encoding, reward computation and validation, bookkeeping. */
    controllerMs: number;
    controllerFraction: number;
  };
  traffic: TrafficStats;
  workers: Record<string, WorkerStepStats>;
  trajectories: Trajectory<S>[];
  /** The rewards this step trained on, and the episodes it left out with why: the one reward pass of the step. */
  rewards: AssignedRewards;
  /** Per model-scored reward rule (judges, reward models): calls, failures, cache hits, agreement. */
  judges: Record<string, ModelRuleStats>;
}

/** Whether the workflow has agent nodes, whose calls can chain onto an earlier sample's ids. */
const hasAgents = (wf: { nodes: ReadonlyMap<string, { kind: string }> }): boolean => [...wf.nodes.values()].some((n) => n.kind === "agent");

/** The batch evaluation's samples belong to under asynchronous RL (no step's). */
const EVAL_BATCH = -1;

// the trajectories of a step that failed after its rollout, so a caller can still write them
const failedRollouts = new WeakMap<object, Trajectory<unknown>[]>();

/**
 * The trajectories of the step whose `controller.step()` threw `err` after its rollout finished
 * (undefined for other errors).
 *
 * @example
 * try { await controller.step(items) } catch (err) { await appendTrajectories(dir, n, failedStepTrajectories(err) ?? []); throw err; }
 */
export function failedStepTrajectories(err: unknown): Trajectory<unknown>[] | undefined {
  return typeof err === "object" && err !== null ? failedRollouts.get(err) : undefined;
}

export interface Controller<S extends object, T> {
  /**
   * One RL step over these episodes. A throw after the rollout (a reward validation error, a
   * refused reward) first drops the step's cached samples; failedStepTrajectories(err) has the rollout.
   * `onEpisodeDone` watches the rollout's progress.
   */
  step(items: readonly StepItem<S, T>[], onEpisodeDone?: (done: number, total: number) => void): Promise<StepReport<S>>;
  /**
   * Runs episodes without training (default greedy) and returns their trajectories; `onEpisodeDone`
   * watches progress. Worker groups keep no sample (records hold a null `sampleHandle`), except for a
   * workflow with agent nodes, whose chained calls need the earlier samples: those are released after.
   */
  evaluate(
    items: readonly StepItem<S, T>[],
    sampling?: Partial<Sampling>,
    onEpisodeDone?: (done: number, total: number) => void,
  ): Promise<Trajectory<S>[]>;
  /** Steps taken so far. */
  steps(): number;
  /**
   * Asynchronous RL (maxStaleness ≥ 1): the rollout half of step `at.step` (0-based), generated with
   * the weights as they stood after step `at.weightsOf` was trained (null: the weights in place now,
   * only while no update runs). Its training half is `train`; the caller may run the next rollout
   * while it trains.
   */
  rollout(items: readonly StepItem<S, T>[], at: PinAt, onEpisodeDone?: (done: number, total: number) => void): Promise<RolledOut<S>>;
  /** Asynchronous RL: the training half of a rollout: rewards, logprobs, advantages, update and release of its samples only. */
  train(rolled: RolledOut<S>): Promise<StepReport<S>>;
}

/** Which weights a rollout of asynchronous RL generates with (see Controller.rollout). */
export interface PinAt {
  step: number;
  weightsOf: number | null;
}

/** A finished rollout, waiting for its training half. */
export interface RolledOut<S> {
  step: number;
  items: readonly StepItem<S, unknown>[];
  rollout: Rollout<S>;
  timer: PhaseTimer;
  t0: number;
}

/** Every group's state (counters since it started). */
async function groupStates(transport: Transport): Promise<Record<string, WorkerState>> {
  return Object.fromEntries(await Promise.all(transport.groups().map(async (g) => [g, await transport.call(g, "state", {})] as const)));
}

/** How busy each group was between two of its states. */
function workerStats(
  now: Record<string, WorkerState>,
  last: Record<string, WorkerState> | null,
  stepMs: number,
  windowMs: number,
): Record<string, WorkerStepStats> {
  const out: Record<string, WorkerStepStats> = {};
  for (const [g, s] of Object.entries(now)) {
    const prev = last?.[g];
    const busyMs = Object.fromEntries(Object.entries(s.busyMs).map(([k, v]) => [k, v - (prev?.busyMs[k] ?? 0)]));
    const steps = s.generator.steps - (prev?.generator.steps ?? 0);
    const seqs = s.generator.sequenceSteps - (prev?.generator.sequenceSteps ?? 0);
    const busy = Object.values(busyMs).reduce((a, v) => a + v, 0);
    out[g] = { busyMs, busyFraction: busy / stepMs, meanBatch: steps ? seqs / steps : 0, decodeSteps: steps, windowMs };
  }
  return out;
}

/** Each group's busy time between two reads of its states: the end of the step trained before and of this one. */
function workerWindow(transport: Transport) {
  let last: Record<string, WorkerState> | null = null;
  let lastAt = 0;
  return {
    /** Reads the states the first step's window starts from (once). */
    async open(): Promise<void> {
      if (last) return;
      last = await groupStates(transport);
      lastAt = performance.now();
    },
    /** How busy each group was since the last read, which the next window starts from. */
    async next(stepMs: number): Promise<Record<string, WorkerStepStats>> {
      const now = await groupStates(transport);
      const at = performance.now();
      const stats = workerStats(now, last, stepMs, at - lastAt);
      last = now;
      lastAt = at;
      return stats;
    },
  };
}

/** Asynchronous RL: pins every group's generation to the version `want` names (null: the weights in place) for `batch`; returns them. */
async function pinGroups(
  transport: Transport,
  want: Record<string, number> | null,
  batch: number,
  trainedThrough: number,
): Promise<Record<string, number>> {
  const pin = { batch, trainedThrough };
  const pinned = await Promise.all(
    transport.groups().map(async (g) => [g, (await transport.call(g, "pin", { version: want?.[g] ?? null, ...pin })).version] as const),
  );
  return Object.fromEntries(pinned);
}

/**
 * Builds a controller over worker groups reached through `transport`.
 *
 * @example
 * const controller = createController({ workflow: wf, cast, transport, rewards: [formatReward(), sharedOutcome(score)], advantage: { estimator: "grpo" } });
 * const report = await controller.step(tasks.map((task, i) => ({ episode: { id: `e${i}`, state: init(task), taskId: task.id }, task })));
 */
export function createController<S extends object, T>(options: ControllerOptions<S, T>): Controller<S, T> {
  const o = resolveOptions(options);
  const asyncRl = o.maxStaleness > 0;
  let stepNo = o.startStep ?? 0;
  const busyWindow = workerWindow(o.transport);
  // asynchronous RL: each group's weight version once a step was trained, for the rollouts pinned to it
  const versionsAfter = new Map<number, Record<string, number>>();
  const groups = () => o.transport.groups();
  const pin = (want: Record<string, number> | null, batch: number, trainedThrough: number) =>
    pinGroups(o.transport, want, batch, trainedThrough);

  const rolloutOf = async (items: readonly StepItem<S, T>[], step: number, onEpisodeDone?: (done: number, total: number) => void) => {
    await busyWindow.open();
    const t0 = performance.now();
    const timer = phaseTimer();
    const ctx: StepContext<S, T> = { o, step, timer, ...(asyncRl && { batch: step }) };
    o.transport.resetTraffic();
    const rollout = await timer.time("rollout", () => rolloutPhase(ctx, items, undefined, onEpisodeDone));
    return { step, items, rollout, timer, t0 };
  };

  const trainOf = async ({ step, items, rollout, timer, t0 }: RolledOut<S>): Promise<StepReport<S>> => {
    const updated = new Map<string, number>();
    const ctx: StepContext<S, T> = { o, step, timer, ...(asyncRl && { batch: step, versions: updated }) };
    const { trajectories } = rollout;
    const scope = asyncRl ? { batch: step } : {};
    const release = () => Promise.all(groups().map((g) => o.transport.call(g, "release", scope)));
    let assigned: AssignedRewards;
    let judges: Record<string, ModelRuleStats>;
    let adv: Awaited<ReturnType<typeof advantagePhase>>;
    let upd: Awaited<ReturnType<typeof updatePhase>>;
    try {
      ({ judges, ...assigned } = await timer.time("rewards", () => rewardPhase(ctx, rollout, items as readonly StepItem<S, T>[])));
      await timer.time("logprobs", () => logprobsPhase(ctx, assigned));
      adv = await timer.time("advantages", () => advantagePhase(ctx, assigned));
      upd = await timer.time("update", () => updatePhase(ctx));
    } catch (err) {
      // no half-rewarded samples may outlive the failed step
      await release().catch(() => {});
      if (typeof err === "object" && err !== null) failedRollouts.set(err, trajectories as Trajectory<unknown>[]);
      throw err;
    }
    await timer.time("release", release);
    if (asyncRl) {
      versionsAfter.set(step, { ...versionsAfter.get(step - 1), ...Object.fromEntries(updated) });
      // a later rollout (step k > step) reads the weights after step k−1−η at the oldest, η ≤ MAX_STALENESS
      for (const k of versionsAfter.keys()) if (k < step - MAX_STALENESS) versionsAfter.delete(k);
    }
    const traffic = o.transport.traffic();
    const stepMs = performance.now() - t0;
    const { roles, episodes } = timer.sync("bookkeeping", () => ({
      roles: roleMetrics(trajectories, assigned, adv, upd),
      episodes: {
        count: trajectories.length,
        rewarded: assigned.counts.rewarded,
        failed: assigned.counts.failed,
        metrics: meanMetrics(trajectories.map((t) => t.metrics)),
      },
    }));
    const workers = await busyWindow.next(stepMs);
    stepNo = step + 1;
    const phases = timer.totals();
    const generationMs = Object.values(workers).reduce((a, w) => a + (w.busyMs.generation ?? 0), 0);
    const controllerMs = (phases.routing ?? 0) + traffic.codecMs + (phases.rewardBookkeeping ?? 0) + (phases.bookkeeping ?? 0);
    return {
      step: step + 1, // the controller counts from 0 inside (seeds, weight versions); users see 1, 2, …
      roles,
      episodes,
      timings: { stepMs, phases, generationMs, toolsMs: toolMs(trajectories), controllerMs, controllerFraction: controllerMs / stepMs },
      traffic,
      workers,
      trajectories,
      rewards: assigned,
      judges,
    };
  };

  const refuseSync = (what: string) => {
    if (!asyncRl) throw new MasoError("CONTROLLER_CONFIG", `${what} is for asynchronous RL`, "set maxStaleness ≥ 1, or call step()");
  };

  return {
    steps: () => stepNo,
    async evaluate(items, sampling = { temperature: 0 }, onEpisodeDone) {
      // asynchronous RL: generation reads the weights in place, not a rollout's pinned ones
      if (asyncRl) await pin(null, EVAL_BATCH, stepNo - 1);
      const ctx: StepContext<S, T> = { o, step: stepNo, timer: phaseTimer() };
      // an agent's later call may continue an earlier reply's token ids, which only a kept sample holds
      const keep = hasAgents(o.workflow);
      const { trajectories } = await rolloutPhase(ctx, items, sampling, onEpisodeDone, {
        concurrency: o.evalConcurrency,
        ...(!keep && { keep: false }),
      });
      if (keep) await Promise.all(groups().map((g) => o.transport.call(g, "release", asyncRl ? { batch: EVAL_BATCH } : {})));
      return trajectories;
    },
    async step(items, onEpisodeDone) {
      if (asyncRl) return trainOf(await this.rollout(items, { step: stepNo, weightsOf: null }, onEpisodeDone));
      return trainOf(await rolloutOf(items, stepNo, onEpisodeDone));
    },
    async rollout(items, at, onEpisodeDone) {
      refuseSync("rollout()");
      const want = at.weightsOf === null ? null : versionsAfter.get(at.weightsOf);
      if (want === undefined)
        throw new MasoError(
          "GENERATION_VERSION",
          `no weight versions are recorded for step ${at.weightsOf}`,
          "pin a step trained by this controller, or null between updates",
        );
      const pinned = await pin(want, at.step, at.weightsOf ?? at.step - 1);
      // the weights in place are those after the step before this one
      if (want === null) versionsAfter.set(at.step - 1, pinned);
      return rolloutOf(items, at.step, onEpisodeDone);
    },
    async train(rolled) {
      refuseSync("train()");
      return trainOf(rolled);
    },
  };
}
