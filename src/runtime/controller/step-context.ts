// The resolved controller settings and per-step context every phase function receives. Types and
// option resolution only; the phases themselves live in *-phase.ts.
import type { Sampling } from "../../workflow/role.js";
import { EPISODE_DEFAULTS } from "../../defaults.js";
import { MasoError } from "../../errors.js";
import type { HappoKey } from "../../rl/advantages/happo.js";
import { getEstimator } from "../../rl/advantages/registry.js";
import type { EstimatorOptions } from "../../rl/advantages/types.js";
import type { NamedReward } from "../../rewards/types.js";
import { MAX_STALENESS } from "../../rl/update/off-policy.js";
import { checkTimeout } from "../../workflow/deadline.js";
import type { Workflow } from "../../workflow/graph-types.js";
import type { EpisodeInput } from "../../workflow/episode.js";
import type { TokenCounter } from "../../workflow/truncate.js";
import { type CastMap, rolesOf } from "../protocol/cast-map.js";
import type { PhaseTimer } from "./phase-timer.js";
import type { Transport } from "../protocol/transport.js";

/** Which advantage estimator a model uses, and its options. */
export interface AdvantageChoice {
  estimator: string;
  options?: EstimatorOptions;
}

/** How agents are updated within a step (MARFT). */
export type UpdateOrder = "together" | "round-robin" | "happo";

export interface ControllerOptions<S extends object, T> {
  workflow: Workflow<S, string>;
  cast: CastMap;
  transport: Transport;
  /** Reward functions; validated per episode by src/rewards (missing / duplicate / NaN are loud). */
  rewards: readonly NamedReward<T, S>[];
  /** One estimator for every model, or one per model name. */
  advantage: AdvantageChoice | Readonly<Record<string, AdvantageChoice>>;
  /** Default "together". */
  updateOrder?: UpdateOrder;
  /** Agent (role) order for round-robin and HAPPO (default: the workflow's role node order). */
  agentOrder?: readonly string[];
  /** HAPPO: fixed (agentOrder) or seeded random order each step, factor key, optional factor clip. */
  happo?: { order?: "fixed" | "random"; by?: HappoKey; clip?: readonly [number, number] };
  /** Steps that train only critics before any policy update (default 0). */
  criticWarmupSteps?: number;
  /** Group baseline key of an episode (default: its taskId, else its id). */
  groupKey?: (episode: EpisodeInput<S>, task: T) => string;
  /** Episodes in flight at once (default 32, src/defaults.ts). */
  concurrency?: number;
  /** Episodes in flight at once in evaluate() (default 64, src/defaults.ts). */
  evalConcurrency?: number;
  /** Rollout sampling overrides for every role (unset fields keep each role's own). */
  sampling?: Partial<Sampling>;
  /** Rollout sampling overrides for single roles, by name (after `sampling`); evaluation ignores them. */
  roleSampling?: Readonly<Record<string, Partial<Sampling>>>;
  /**
   * Per role, by name: how a role with maxPromptTokens counts its prompt, with the tokenizer of the model that serves
   * it. The controller loads nothing: whoever wires the runtime builds these (createRuntime does, see token-counters.ts).
   * A role with maxPromptTokens not named here counts ~4 characters per token.
   */
  tokenCounters?: Readonly<Record<string, TokenCounter>>;
  /** Caps every role's maxNewTokens in rollouts and evaluation. */
  maxNewTokens?: number;
  /** Deadline of each episode, in rollouts and evaluation (ms; default 10 min): a miss fails the episode (EPISODE_TIMEOUT). */
  episodeTimeoutMs?: number;
  /** Deadline of function nodes that neither the node nor the workflow sets (ms; default 60 s). */
  nodeTimeoutMs?: number;
  /** Reward validation errors: throw (default) or exclude the episode. */
  onInvalidReward?: "throw" | "exclude";
  seed?: number;
  /** Number of the first step (default 0); a resumed run passes the steps already taken. */
  startStep?: number;
  /**
   * Asynchronous RL: η, the most weight versions a trained sample may lag (default 0: synchronous).
   * With η ≥ 1 the worker groups must be built with the same staleness; see Controller.rollout.
   */
  maxStaleness?: number;
}

export interface ResolvedOptions<S extends object, T> extends ControllerOptions<S, T> {
  updateOrder: UpdateOrder;
  agentOrder: readonly string[];
  criticWarmupSteps: number;
  concurrency: number;
  evalConcurrency: number;
  seed: number;
  maxStaleness: number;
  advantageOf: (model: string) => AdvantageChoice;
}

/** What each phase of one step sees. */
export interface StepContext<S extends object, T> {
  o: ResolvedOptions<S, T>;
  step: number;
  timer: PhaseTimer;
  /** Asynchronous RL: the batch (this step's) every worker operation is scoped to. */
  batch?: number;
  /** Asynchronous RL: each updated group's weight version after its update this step. */
  versions?: Map<string, number>;
}

/** The batch scope of a worker request: this step's samples only under asynchronous RL. */
export const scopeOf = <S extends object, T>(ctx: StepContext<S, T>): { batch?: number } =>
  ctx.batch === undefined ? {} : { batch: ctx.batch };

/** One unit of work for a step: an episode and the task its rewards are computed against. */
export interface StepItem<S, T> {
  episode: EpisodeInput<S>;
  task: T;
}

/** Fills defaults and checks the controller options against the cast. */
export function resolveOptions<S extends object, T>(o: ControllerOptions<S, T>): ResolvedOptions<S, T> {
  const roles = rolesOf(o.workflow);
  const agentOrder = o.agentOrder ?? roles;
  for (const r of agentOrder)
    if (!o.cast.roles.has(r))
      throw new MasoError("CONTROLLER_CONFIG", `agentOrder names role "${r}", which the cast does not map`, `roles: ${roles.join(", ")}`);
  checkTimeout(o.episodeTimeoutMs, "episodeTimeoutMs", "CONTROLLER_CONFIG");
  checkTimeout(o.nodeTimeoutMs, "nodeTimeoutMs", "CONTROLLER_CONFIG");
  const updateOrder = o.updateOrder ?? "together";
  if (!["together", "round-robin", "happo"].includes(updateOrder))
    throw new MasoError("CONTROLLER_CONFIG", `updateOrder is "${updateOrder}"`, "use together, round-robin or happo");
  const maxStaleness = o.maxStaleness ?? 0;
  if (!Number.isInteger(maxStaleness) || maxStaleness < 0 || maxStaleness > MAX_STALENESS)
    throw new MasoError("CONTROLLER_CONFIG", `maxStaleness is ${maxStaleness}`, `use an integer from 0 to ${MAX_STALENESS}`);
  const single = typeof (o.advantage as AdvantageChoice).estimator === "string";
  const perModel = o.advantage as Readonly<Record<string, AdvantageChoice>>;
  if (!single)
    for (const m of o.cast.models.keys())
      if (!perModel[m])
        throw new MasoError("CONTROLLER_CONFIG", `advantage has no entry for model "${m}"`, "give one estimator for all, or one per model");
  // worker groups know only the built-in estimators: an unknown name fails here, not after a rollout
  for (const m of o.cast.models.keys()) getEstimator((single ? (o.advantage as AdvantageChoice) : perModel[m]).estimator);
  return {
    ...o,
    updateOrder,
    agentOrder,
    criticWarmupSteps: o.criticWarmupSteps ?? 0,
    concurrency: o.concurrency ?? EPISODE_DEFAULTS.concurrency,
    evalConcurrency: o.evalConcurrency ?? EPISODE_DEFAULTS.evalConcurrency,
    seed: o.seed ?? 0,
    maxStaleness,
    advantageOf: (m) => (single ? (o.advantage as AdvantageChoice) : perModel[m]),
  };
}
