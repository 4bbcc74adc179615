// The controller ↔ worker-group contract: every operation a worker group offers, with typed request
// and response messages. Messages hold ids, text, rewards, per-episode scalars and metrics only —
// never token tensors — so any transport (in-process, worker_threads, NATS) can carry them as JSON.
import type { EstimatorOptions } from "../../rl/advantages/types.js";
import type { GaeContinuation } from "../../rl/advantages/types.js";
import type { HappoKey } from "../../rl/advantages/happo.js";
import type { UpdateReport } from "../../rl/update/types.js";
import type { OutputLogprob, RoleCallRequest } from "../../workflow/role-call.js";
import type { SampleHandle } from "../../workflow/trajectory.js";
import type { CompleteRequest, CompleteResponse, RateRequest, RateResponse } from "../../rewards/model-calls.js";

/**
 * One role call routed to a worker group: the workflow's request as it was made, and what routing
 * adds. The worker group reads the call's `extend` only where the sample it names is its own.
 */
export interface GenerateRequest {
  call: RoleCallRequest;
  /** LoRA adapter from the cast (null = base weights). */
  adapter: string | null;
  /** Sampling seed, derived from the call's identity (src/runtime/controller/role-router.ts seedOf). */
  seed: number;
  /** The role's extra chat-template variables (e.g. { enable_thinking: false }), for rendering `messages`. */
  chatTemplate?: Readonly<Record<string, unknown>>;
  /**
   * false: generate exactly as a kept call would, but cache no sample (nothing of it can train), as
   * `maso serve` does. Absent: the sample is kept for training.
   */
  keep?: false;
}

export interface GenerateResponse {
  text: string;
  /** The kept sample; null for a request with `keep: false`. */
  sampleHandle: SampleHandle | null;
  promptTokens: number;
  outputTokens: number;
  finishReason: "stop" | "length";
  /** For a request with `extend`: whether the prompt reused that sample's ids. */
  chained?: boolean;
  /** When asked for: each output token's text and the log-prob it was sampled with (and its alternatives, when asked for). */
  logprobs?: OutputLogprob[];
}

// the model calls of the reward layer are typed beside it (rewards sit below the runtime)
export type { CompleteRequest, CompleteResponse, RateRequest, RateResponse } from "../../rewards/model-calls.js";

/**
 * A reward for one cached sample. `episodeId` and `role` say whose sample the controller believes
 * it is; the worker group refuses the reward unless they match what it stored at generation.
 */
export interface RewardItem {
  /** sampleHandle.id */
  id: number;
  episodeId: string;
  role: string;
  /** Scalar (credited to the last response token) or one value per response token. */
  reward: number | number[];
  /** Group baseline key (GRPO/RLOO); the estimators also group by role and turn. */
  groupKey: string;
}

export interface AssignRewardsRequest {
  items: RewardItem[];
}

export interface AssignRewardsResponse {
  accepted: number;
}

/** Samples to drop before the end of the step (generated for an episode that had already ended). */
export interface DiscardRequest {
  ids: number[];
}

/**
 * Asynchronous RL: which step's samples an operation touches (the step whose rollout generated
 * them; see PinRequest). Absent: every cached sample, as in a synchronous run.
 */
export interface BatchScope {
  batch?: number;
}

/** Fills in every cached sample (of the batch) that lacks them: old and reference log-probs, and values with a critic. */
export type LogprobsRequest = BatchScope;

export interface LogprobsResponse {
  /** How many samples it ran forwards for. */
  computed: number;
}

/** One piece of an episode's agent chain owned by this worker group, in agent order. */
export interface AgentChainPiece {
  ids: number[];
  /** Value and advantage of the element right after this piece (both 0 at a terminal end). */
  next: GaeContinuation;
}

export interface AgentChainsRequest {
  /** A registered estimator whose advantages chain across agents (it has `chain`). */
  estimator: string;
  options: EstimatorOptions;
  chains: AgentChainPiece[];
}

/** Per chain: V and A of its first element, i.e. the `next` of the piece before it. */
export interface AgentChainsResponse {
  heads: GaeContinuation[];
}

export interface ComputeAdvantagesRequest extends BatchScope {
  /** A registered estimator name; a chained one finishes what agentChains computed. */
  estimator: string;
  options: EstimatorOptions;
}

/** Per-role advantage figures (over response tokens). */
export interface AdvantageStats {
  samples: number;
  advantageMean: number;
  advantageStd: number;
  returnMean: number;
}

export interface ComputeAdvantagesResponse {
  roles: Record<string, AdvantageStats>;
  metrics: Record<string, number>;
}

export interface UpdateRequest extends BatchScope {
  /** The RL step (0-based) this update belongs to; drives the learning-rate schedule. */
  step?: number;
  /** Roles whose samples train (default: all roles with ready samples). */
  roles?: string[];
  policy: boolean;
  critic: boolean;
  /** HAPPO: advantage factors of the agents updated before, by happo key. */
  happo?: { factors: Record<string, number>; by: HappoKey };
  /** Return Σ(log π_new − log π_old) per sample after the update (for the next agent's factors). */
  returnLogRatios?: boolean;
}

/** Σ over one sample's response tokens of (log π_new − log π_old), after an update. */
export interface LogRatio {
  episode: string;
  turn: number;
  logRatio: number;
}

export interface UpdateResponse {
  report: UpdateReport;
  /** One per updated sample, when `returnLogRatios` was asked. */
  logRatios?: LogRatio[];
  /** Asynchronous RL: the group's weight version after this update. */
  version?: number;
}

export interface DiagnosticsRequest extends BatchScope {
  roles?: string[];
}

/** Per role: mean per-token k3 KL of the current policy to the reference, and how far the reference moved. */
export interface DiagnosticsResponse {
  roles: Record<string, { samples: number; klRef: number; refDrift: number }>;
}

/** Drops every cached sample, or those of one batch (end of a step). */
export type ReleaseRequest = BatchScope;

/**
 * Asynchronous RL, between two rollouts: generation reads weight version `version` from now on, and
 * the samples it makes belong to `batch` (the step). Only a worker group built for asynchronous RL
 * serves it.
 */
export interface PinRequest {
  /** null: the weights in place now (only while no update runs). */
  version: number | null;
  batch: number;
  /** The last step (0-based; -1: none) whose updates those weights hold: samples' lag is counted in steps from it. */
  trainedThrough: number;
}

/** A generator's counters, reported with a worker group's state: how many sequences each decode step carried. */
export interface GeneratorStats {
  requests: number;
  /** Forward passes (decode steps) run. */
  steps: number;
  /** Sum over steps of the sequences in the step; steps > 0 ⇒ mean batch = sequenceSteps / steps. */
  sequenceSteps: number;
  /** Wall time spent inside decode steps (ms). */
  busyMs: number;
}

export interface WorkerState {
  model: string;
  roles: string[];
  adapters: string[];
  cachedSamples: number;
  /** Samples ever cached (generated here or adopted from a replica), and dropped by discard or release. */
  samplesKept: number;
  samplesDropped: number;
  /** Role calls served, by role and adapter ("-" for the base). */
  calls: Record<string, Record<string, number>>;
  /** Busy wall time per operation (ms); generation = decode steps. */
  busyMs: Record<string, number>;
  generator: GeneratorStats;
  updates: number;
}

/**
 * What a worker group offers the controller. Every method takes and returns plain JSON data.
 *
 * @example
 * const res = await transport.call("policy", "generate", request);
 */
export interface WorkerGroupApi {
  /** `onText` (in-process only, never on the wire) hears the output text as it decodes. */
  generate(req: GenerateRequest, onText?: (delta: string) => void): Promise<GenerateResponse>;
  /** Generates without caching a sample (never trained): judge calls. */
  complete(req: CompleteRequest): Promise<CompleteResponse>;
  /** Scores (prompt, response) pairs with the model's reward head (REWARD_HEAD_MISSING without one). */
  rate(req: RateRequest): Promise<RateResponse>;
  assignRewards(req: AssignRewardsRequest): Promise<AssignRewardsResponse>;
  /** After the rewards and before any advantage, update or diagnostics operation, which read the log-probs. */
  computeLogprobs(req: LogprobsRequest): Promise<LogprobsResponse>;
  agentChains(req: AgentChainsRequest): Promise<AgentChainsResponse>;
  computeAdvantages(req: ComputeAdvantagesRequest): Promise<ComputeAdvantagesResponse>;
  update(req: UpdateRequest): Promise<UpdateResponse>;
  diagnostics(req: DiagnosticsRequest): Promise<DiagnosticsResponse>;
  /** Drops these cached samples; ids it does not hold are ignored. */
  discard(req: DiscardRequest): Promise<{ discarded: number }>;
  /** Drops every cached sample, or one batch's (end of a step). */
  release(req: ReleaseRequest): Promise<{ released: number }>;
  /** Asynchronous RL: the weight version and batch of the next rollout's generations. */
  pin(req: PinRequest): Promise<{ version: number }>;
  state(req: Record<string, never>): Promise<WorkerState>;
}

export type WorkerOp = keyof WorkerGroupApi;
export type RequestOf<K extends WorkerOp> = Parameters<WorkerGroupApi[K]>[0];
export type ResponseOf<K extends WorkerOp> = Awaited<ReturnType<WorkerGroupApi[K]>>;
