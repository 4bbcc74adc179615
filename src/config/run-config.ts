// The training-run configuration (`maso train`): models, cast, algorithm, sampling, schedule,
// checkpointing, eval, seed and run directory, as zod schemas with `.strict()` objects so unknown
// fields fail. Defaults follow the papers (see docs/config.md); those the library has too come from
// its table (src/defaults.ts). Schema and types only: cross-field checks (the cast against the
// workflow's roles) live in cast.ts, file loading in load-config.ts.
import { z } from "zod";
import { EPISODE_DEFAULTS as E, NEW_TOKEN_DEFAULTS, TRAINER_DEFAULTS as T } from "../defaults.js";
import { LORA_TARGETS } from "../engine/config.js";
import { estimators } from "../rl/advantages/registry.js";
import { MAX_STALENESS } from "../rl/update/off-policy.js";
import { COLLAPSE_DEFAULTS as C } from "./collapse-settings.js";
import { PRESET_NAMES } from "./model-presets.js";

// Every number has an upper bound too: a typo such as groupSize 1e12 or lr 1e300 must fail here,
// naming the field, not as a RangeError or a NaN loss steps into a run.
const posInt = (max: number) => z.number().int().min(1).max(max);
const nonNeg = (max: number) => z.number().min(0).max(max);
/** Most steps of any step-counted setting (schedule, warmup, checkpoint and eval intervals). */
export const MAX_STEPS = 10_000_000;
/** Most episodes one step may start (tasksPerStep × groupSize). */
export const MAX_EPISODES_PER_STEP = 1_000_000;

export const ESTIMATORS = ["gae-action", "gae-token", "grpo", "rloo", "reinforce-pp", "dr-grpo"] as const;
/** Estimators that bootstrap from a critic and so default to γ=0.99, λ=0.95; the others are bandit-style (1, 1). */
export const CRITIC_ESTIMATORS: readonly string[] = ESTIMATORS.filter((n) => estimators[n].critic);

const loraSchema = z
  .object({
    rank: posInt(1024).default(8),
    alpha: z.number().positive().max(10_000).default(16),
    targets: z.array(z.enum(LORA_TARGETS)).min(1).default(["q_proj", "k_proj", "v_proj", "o_proj"]),
    /** named adapters on this model (e.g. one per role); cast entries `model/adapter` refer to them */
    adapters: z
      .array(z.string().regex(/^[A-Za-z0-9_-]+$/))
      .min(1)
      .max(256)
      .default(["default"]),
  })
  .strict();

const optimizerSchema = z
  .object({
    lr: z.number().positive().max(1).default(T.lr),
    weightDecay: nonNeg(1).default(T.weightDecay),
    maxGradNorm: z.number().positive().max(10_000).default(T.maxGradNorm),
    beta1: z.number().min(0).max(0.9999).default(T.beta1),
    beta2: z.number().min(0).max(0.99999).default(T.beta2),
    eps: z.number().positive().max(1).default(T.eps),
    schedule: z.enum(["constant", "cosine"]).default("constant"),
    warmupSteps: z.number().int().min(0).max(MAX_STEPS).default(0),
  })
  .strict();

export const modelSchema = z
  .object({
    /** an engine preset … */
    preset: z.enum(PRESET_NAMES as [string, ...string[]]).optional(),
    /** … or an HF checkpoint directory (config.json + safetensors + tokenizer) */
    weights: z.string().min(1).optional(),
    /** LoRA adapters on a frozen base; omit for full fine-tuning */
    lora: loraSchema.optional(),
    /** train the base weights too (default: true without LoRA, false with) */
    trainBase: z.boolean().optional(),
    /** never trained: a judge or reward model that reward rules call (docs/reward-models.md), mapped to no role */
    frozen: z.boolean().optional(),
    /** critic head on the final hidden state (needed by gae-action / gae-token) */
    valueHead: z
      .object({ hidden: posInt(65_536).default(64), detach: z.boolean().default(false) })
      .strict()
      .optional(),
    optimizer: optimizerSchema.default(() => optimizerSchema.parse({})),
    /** frozen copy for the KL-to-reference term (kept only when algorithm.klCoef > 0) */
    reference: z.boolean().default(true),
    /**
     * GEMM operands: fp32, bf16 (rounded operands, fp32 accumulation; needs oneDNN, see `maso doctor`),
     * or auto (the default): bf16 where the CPU runs it natively, else fp32 (resolved in the
     * effective config).
     */
    precision: z.enum(["auto", "fp32", "bf16"]).default("auto"),
  })
  .strict()
  .superRefine((m, ctx) => {
    if ((m.preset === undefined) === (m.weights === undefined))
      ctx.addIssue({
        code: "custom",
        path: m.preset === undefined ? ["preset"] : ["weights"],
        message: "exactly one of `preset` (tiny, small, base) or `weights` (a model directory)",
      });
    if (m.frozen && (m.lora || m.trainBase || m.valueHead))
      ctx.addIssue({
        code: "custom",
        path: ["frozen"],
        message: "a frozen model takes no lora, trainBase or valueHead (it never trains)",
      });
  });

export const algorithmSchema = z
  .object({
    estimator: z.enum(ESTIMATORS).default("grpo"),
    /** PPO ratio clip: [1 - clipLow, 1 + clipHigh] (DAPO's asymmetric default) */
    clipLow: z.number().min(0).max(1).default(T.clipLow),
    clipHigh: z.number().min(0).max(10).default(T.clipHigh),
    epochs: posInt(1000).default(T.epochs),
    /** samples per optimiser step */
    minibatchSize: posInt(1_000_000).default(T.minibatchSize),
    /** KL-to-reference coefficient (0: no reference model kept) */
    klCoef: nonNeg(100).default(T.klCoef),
    klEstimator: z.enum(["k1", "k2", "k3"]).default(T.klEstimator),
    entropyCoef: nonNeg(10).default(T.entropyCoef),
    /** old log-probs: a scoring forward after the rollout ("recompute", exact at any batch composition) or the sampler's own ("rollout", no forward) */
    oldLogProbs: z.enum(["rollout", "recompute"]).default(T.oldLogProbs),
    /** asynchronous RL: cap of the truncated importance weight π_prox/π_behav on each token of a stale sample */
    importanceCap: z.number().min(1).max(1000).default(T.importanceCap),
    /** discount and GAE λ; default 0.99/0.95 with a critic, 1/1 for bandit estimators (GRPO, RLOO, …) */
    gamma: z.number().min(0).max(1).optional(),
    lambda: z.number().min(0).max(1).optional(),
    /** advantage whitening scope */
    normalize: z.enum(["role", "role-turn", "model", "global", "none"]).default("role"),
    /** samples per task for group baselines (GRPO, RLOO, Dr.GRPO) */
    groupSize: posInt(4096).default(4),
    groupBy: z
      .array(z.enum(["task", "role", "turn", "model"]))
      .min(1)
      .default(["task", "role", "turn"]),
    lossAggregation: z.enum(["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "token-sum-norm"]).default(T.aggregation),
    /** MARFT: PPO on the action (sum of token log-probs) instead of each token */
    actionLevel: z.boolean().default(T.actionLevel),
    lengthNormalize: z.boolean().default(T.lengthNormalize),
    /** MARFT update order: all roles together, one per step in turn, or HAPPO's sequential correction */
    updateOrder: z.enum(["together", "round-robin", "happo"]).default("together"),
    valueCoef: nonNeg(100).default(T.valueCoef),
    valueClip: nonNeg(1_000_000).default(T.valueClip),
    /** skip a minibatch whose approximate KL exceeds this (null: never) */
    maxApproxKl: z.number().positive().max(1000).nullable().default(null),
    /** MiB one update chunk may keep for its backward (activations + LM-head logits); larger minibatches are cut */
    activationBudgetMb: z.number().positive().max(1_048_576).default(T.activationBudgetMb),
    criticWarmupSteps: z.number().int().min(0).max(MAX_STEPS).default(0),
  })
  .strict();

const roleSamplingSchema = z
  .object({
    temperature: z.number().min(0).max(10).optional(),
    topP: z.number().gt(0).max(1).optional(),
    topK: z.number().int().min(0).max(1_000_000).optional(),
  })
  .strict();

/**
 * Rollout sampling: each field set here overrides every role's own setting; unset fields keep the
 * role's. `roles` overrides further for one role (e.g. explore in `extract` at 0.7 while `answer`
 * exploits at 0.3). Evaluation stays greedy whatever is set here.
 */
const samplingSchema = roleSamplingSchema
  .extend({
    /** caps every role's maxNewTokens */
    maxNewTokens: posInt(NEW_TOKEN_DEFAULTS.agentCall).optional(),
    /** per-role overrides, by workflow role name */
    roles: z.record(z.string(), roleSamplingSchema).default({}),
  })
  .strict();

const scheduleSchema = z
  .object({
    steps: posInt(MAX_STEPS).default(100),
    /** tasks started per step; each runs algorithm.groupSize episodes */
    tasksPerStep: posInt(100_000).default(8),
    /** most episodes in flight at once */
    concurrency: posInt(100_000).default(E.concurrency),
    /** deadline of one episode (ms): a slower one is a failed episode (EPISODE_TIMEOUT) */
    episodeTimeoutMs: z.number().int().min(1).max(86_400_000).default(E.timeoutMs),
    /** asynchronous RL: rollouts of step n+1 generate with the weights after step n−η while earlier steps train (0: synchronous) */
    maxStaleness: z.number().int().min(0).max(MAX_STALENESS).default(0),
    /**
     * asynchronous RL (maxStaleness ≥ 1): "fixed-lag" pins the weights η steps back (reproducible);
     * "free" pins the newest trained weights when a rollout starts, so the lag (≤ η) follows timing
     */
    asyncMode: z.enum(["fixed-lag", "free"]).default("fixed-lag"),
  })
  .strict();

/** Early warnings of a collapsing role (src/run/collapse-detect.ts; docs/training.md). */
const collapseSchema = z
  .object({
    /** steps averaged for the format baseline, KL and clip fraction */
    window: posInt(1000).default(C.window),
    /** warn when a role's entropy falls below this fraction of its first logged entropy */
    entropyFraction: nonNeg(1).default(C.entropyFraction),
    /** warn when a role's entropy falls below this many nats per token (0: off) */
    entropyMin: nonNeg(100).default(C.entropyMin),
    /** steps in a row the entropy must stay below either threshold (one step's entropy is noisy) */
    entropySteps: posInt(1000).default(C.entropySteps),
    /** warn when a step's format-failure rate is this far above the role's best `window`-step mean */
    formatRise: z.number().gt(0).max(1).default(C.formatRise),
    /** warn when every advantage of a role was 0 this many steps in a row while another role learned */
    noSignalSteps: posInt(MAX_STEPS).default(C.noSignalSteps),
    /** warn when a role's mean KL to the reference over `window` steps exceeds this */
    klMax: z.number().gt(0).max(1_000_000).default(C.klMax),
    /** warn when a role's mean clip fraction over `window` steps exceeds this */
    clipFracMax: z.number().gt(0).max(1).default(C.clipFracMax),
    /** rollbacks of one role before onCollapse "rollback" stops the run instead */
    maxRollbacks: posInt(1000).default(C.maxRollbacks),
  })
  .strict();

const failuresSchema = z
  .object({
    /** stop the run after a step where more than this fraction of episodes failed (all failed: always stops) */
    maxFailedFraction: z.number().min(0).max(1).default(1),
    /** on a collapse warning: only warn, stop the run (ROLE_COLLAPSED), or roll the role back to the best checkpoint */
    onCollapse: z.enum(["warn", "stop", "rollback"]).default("warn"),
    collapse: collapseSchema.default(() => collapseSchema.parse({})),
  })
  .strict();

const checkpointSchema = z
  .object({
    every: posInt(MAX_STEPS).default(10),
    keep: posInt(10_000).default(3),
  })
  .strict();

const evalSchema = z
  .object({
    /** evaluate every this many steps (0: only at the end) */
    every: z.number().int().min(0).max(MAX_STEPS).default(0),
    split: z.enum(["dev", "test"]).default("dev"),
    /** episodes to evaluate (null: the full split) */
    episodes: posInt(MAX_STEPS).nullable().default(null),
    greedy: z.boolean().default(true),
    /**
     * on dev, also evaluate the untrained cast before step 1 (metrics row `step: 0`), so best-on-dev
     * can name it and the end of the run compares against it; a resumed run never redoes it
     */
    atStart: z.boolean().default(true),
    /** most evaluation episodes in flight at once: evaluation learns nothing, so a wider decode batch only makes it faster */
    concurrency: posInt(100_000).default(E.evalConcurrency),
  })
  .strict();

const natsSchema = z
  .object({
    /** "embedded": a nats-server on 127.0.0.1 for this run; else the server's URL, e.g. nats://10.0.0.5:4222 */
    url: z.string().min(1).default("embedded"),
    /** the run id that scopes subjects (default: one generated per controller start; attached workers need it given) */
    run: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
    /** "spawn": start one local worker process per model and rank; "attach": use workers started elsewhere */
    workers: z.enum(["spawn", "attach"]).default("spawn"),
    /** generation replicas per model name (default 1) */
    replicas: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), posInt(256)).default({}),
    /** data-parallel ranks of every trained model: each generates, computes gradients on its share of every minibatch and steps with the sum */
    ranks: posInt(64).default(1),
    /** threads per spawned worker (default: the cores split between them, at least 1) */
    threads: posInt(1024).optional(),
    heartbeatMs: z.number().int().min(50).max(60_000).default(1000),
    /** a worker silent this long is lost: its pending calls fail (WORKER_LOST) */
    heartbeatTimeoutMs: z.number().int().min(200).max(600_000).default(5000),
    /** the longest any one worker operation may take before it fails (WORKER_TIMEOUT) */
    callTimeoutMs: z.number().int().min(100).max(86_400_000).default(600_000),
    /** how long to wait for every worker's first heartbeat */
    startupTimeoutMs: z.number().int().min(100).max(3_600_000).default(180_000),
    /** the largest checkpoint part (one model's files) carried over NATS to a worker without the run directory */
    maxPartMiB: posInt(1_048_576).default(16_384),
    /** a NATS server outage: "fail" every call at once (NATS_DISCONNECTED), or "hold" them and resume once it is back */
    outage: z.enum(["fail", "hold"]).default("fail"),
    /** hold mode: the longest outage calls wait out before they fail; workers must reconnect at least this long */
    holdMs: z.number().int().min(1000).max(3_600_000).default(30_000),
  })
  .strict();

const runtimeSchema = z
  .object({
    /** "in-process" (default): worker groups in the controller's process; "nats": worker processes over NATS */
    transport: z.enum(["in-process", "nats"]).default("in-process"),
    nats: natsSchema.default(() => natsSchema.parse({})),
  })
  .strict();

export const runConfigSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/)
      .max(200)
      // runDir defaults to runs/<name>: "." or ".." would put the run outside runs/
      .refine((n) => !/^\.+$/.test(n), "a name that is not only dots")
      .default("run"),
    seed: z.number().int().min(0).max(0xffffffff).default(0),
    /** default runs/<name> */
    runDir: z.string().min(1).optional(),
    /** path of the workflow module (the CLI argument wins) */
    workflow: z.string().min(1).optional(),
    models: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), modelSchema).refine((m) => Object.keys(m).length > 0, "at least one model"),
    /** role -> model, or model/adapter */
    cast: z.record(z.string(), z.string().regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)?$/)),
    algorithm: algorithmSchema.default(() => algorithmSchema.parse({})),
    sampling: samplingSchema.default(() => samplingSchema.parse({})),
    schedule: scheduleSchema.default(() => scheduleSchema.parse({})),
    checkpoint: checkpointSchema.default(() => checkpointSchema.parse({})),
    eval: evalSchema.default(() => evalSchema.parse({})),
    failures: failuresSchema.default(() => failuresSchema.parse({})),
    /** where worker groups run: in this process, or in worker processes over NATS (docs/distributed.md) */
    runtime: runtimeSchema.default(() => runtimeSchema.parse({})),
    /** reward scales, by reward function name (explicit, so a −1 format penalty cannot silently dominate) */
    rewardWeights: z.record(z.string(), z.number().min(-1_000_000).max(1_000_000)).default({}),
  })
  .strict();

/** What a user writes (every field with a default may be omitted). */
export type RunConfigInput = z.input<typeof runConfigSchema>;

/** The effective configuration: defaults applied, gamma/lambda, runDir and each model's precision resolved. */
export type RunConfig = z.output<typeof runConfigSchema> & {
  runDir: string;
  algorithm: z.output<typeof algorithmSchema> & { gamma: number; lambda: number };
};
