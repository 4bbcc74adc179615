// Config → runtime: maps a validated run config (src/config) and a workflow module onto the
// runtime's options (model declarations, cast, per-model trainer settings, advantage estimator,
// update order), for `maso train`, `maso worker`, scripts, benchmarks and tests alike.
// Pure translation; building the runtime is createRuntime's job.
import type { CastEntry } from "../config/cast-check.js";
import { type ModelPreset, presetConfig } from "../config/model-presets.js";
import { CRITIC_ESTIMATORS, type RunConfig } from "../config/run-config.js";
import { createByteTokenizer } from "../engine/tokenizer/byte-tokenizer.js";
import { MasoError } from "../errors.js";
import { isModelRule } from "../rewards/model-rules.js";
import type { NamedReward } from "../rewards/types.js";
import type { TrainerOptions } from "../rl/update/config.js";
import type { CastSpec } from "../runtime/protocol/cast-map.js";
import type { ModelSpec } from "../runtime/worker-group/models.js";
import type { RuntimeOptions } from "../runtime/runtime.js";
import type { WorkflowModule } from "./workflow-module.js";

type ModelCfg = RunConfig["models"][string];

/** One config model as a runtime model declaration (weights seeded by the run seed). */
export function modelSpec(name: string, m: ModelCfg, config: RunConfig): ModelSpec {
  const tok = createByteTokenizer();
  const lora = m.lora ? { rank: m.lora.rank, alpha: m.lora.alpha, targets: [...m.lora.targets] } : undefined;
  const trainBase = m.trainBase ?? !m.lora;
  const train = m.frozen ? "frozen" : trainBase ? "full" : "lora";
  const keepRef = m.reference && config.algorithm.klCoef > 0;
  return {
    name,
    source: m.preset ? { config: presetConfig(m.preset as ModelPreset, tok.eosTokenIds), seed: config.seed } : { weights: m.weights! },
    train,
    lora,
    valueHead: m.valueHead ? { hidden: m.valueHead.hidden, detach: m.valueHead.detach } : undefined,
    reference: !keepRef || m.frozen ? "none" : train === "lora" ? "auto" : "frozen-copy",
    seed: config.seed,
    precision: m.precision,
  };
}

/** The trainer settings of one model: its optimiser plus the algorithm's PPO settings. */
export function trainerOptions(m: ModelCfg, config: RunConfig): TrainerOptions {
  const a = config.algorithm;
  const opt = m.optimizer;
  return {
    epochs: a.epochs,
    minibatchSize: a.minibatchSize,
    policyLoss: a.actionLevel ? "action" : "token",
    lengthNormalize: a.lengthNormalize,
    clipLow: a.clipLow,
    clipHigh: a.clipHigh,
    aggregation: a.lossAggregation,
    // REINFORCE++ shapes the reward with the KL penalty (its paper); every other estimator adds it to the loss
    kl: { coef: a.klCoef, estimator: a.klEstimator, placement: a.estimator === "reinforce-pp" ? "reward" : "loss" },
    entropyCoef: a.entropyCoef,
    oldLogProbs: a.oldLogProbs,
    importanceCap: a.importanceCap,
    value: { coef: a.valueCoef, clip: a.valueClip },
    ...(a.maxApproxKl !== null && { approxKlSkip: a.maxApproxKl }),
    activationBudgetMb: a.activationBudgetMb,
    maxGradNorm: opt.maxGradNorm,
    lr: opt.lr,
    eps: opt.eps,
    lrSchedule: { kind: opt.schedule, warmupSteps: opt.warmupSteps, totalSteps: config.schedule.steps },
    weightDecay: opt.weightDecay,
    betas: [opt.beta1, opt.beta2],
    seed: config.seed,
  };
}

/** The cast in the runtime's form. */
export function castSpec(cast: Readonly<Record<string, CastEntry>>): CastSpec {
  return Object.fromEntries(
    Object.entries(cast).map(([role, e]) => [role, e.adapter === null ? { model: e.model } : { model: e.model, adapter: e.adapter }]),
  );
}

/**
 * The module's reward functions scaled by `rewardWeights` (by function name; absent names keep 1).
 * A weight for a name no function has is a config error (CONFIG_REWARD_WEIGHT, exit code 2).
 * @example
 * weightedRewards([formatReward(), sharedOutcome(f1)], { format: 0.2 });
 */
export function weightedRewards<T, S>(
  rewards: readonly NamedReward<T, S>[],
  weights: Readonly<Record<string, number>>,
): NamedReward<T, S>[] {
  const names = rewards.map((r) => r.name);
  for (const n of Object.keys(weights))
    if (!names.includes(n))
      throw new MasoError(
        "CONFIG_REWARD_WEIGHT",
        `rewardWeights.${n}: no reward function is named "${n}"`,
        `reward functions: ${names.join(", ")}`,
      );
  return rewards.map((r) => {
    const w = weights[r.name];
    if (w === undefined || w === 1) return r;
    return {
      ...r, // a model-scored rule keeps its prepare half
      name: r.name,
      fn: (t, task) =>
        r
          .fn(t, task)
          .map((e) => ("skip" in e ? e : { ...e, value: typeof e.value === "number" ? e.value * w : e.value.map((v) => v * w) })),
    };
  });
}

/**
 * The models that model-scored reward rules call (judges, reward models): each must be declared and
 * frozen, or it would train on its own verdicts (CONFIG_SCORING_MODEL, exit code 2). They serve no
 * role but get a worker group.
 */
function scoringModels<T, S>(config: RunConfig, rewards: readonly NamedReward<T, S>[]): string[] {
  const out: string[] = [];
  for (const rule of rewards.filter(isModelRule))
    for (const name of rule.models) {
      const m = config.models[name];
      if (!m)
        throw new MasoError(
          "CONFIG_SCORING_MODEL",
          `reward rule "${rule.name}" calls model "${name}", which the config does not declare`,
          `declare it under models with frozen: true (declared: ${Object.keys(config.models).join(", ")})`,
        );
      if (!m.frozen)
        throw new MasoError(
          "CONFIG_SCORING_MODEL",
          `reward rule "${rule.name}" calls model "${name}", which is not frozen`,
          `set models.${name}.frozen: true; a judge that trains would learn from its own verdicts`,
        );
      out.push(name);
    }
  return out;
}

/**
 * Everything createRuntime needs, from the config and the module.
 * @example
 * const rt = await createRuntime({ ...runtimeFromConfig(config, cast, mod), startStep: 0 });
 */
export function runtimeFromConfig<S extends object, T>(
  config: RunConfig,
  cast: Readonly<Record<string, CastEntry>>,
  mod: WorkflowModule<S, T>,
): RuntimeOptions<S, T> {
  const a = config.algorithm;
  // each estimator accepts only its own options: γ/λ for GAE, γ for REINFORCE++, groups for the rest
  const critic = CRITIC_ESTIMATORS.includes(a.estimator);
  const group = !critic && a.estimator !== "reinforce-pp";
  const used = [...new Set([...Object.values(cast).map((e) => e.model), ...scoringModels(config, mod.rewards)])];
  return {
    workflow: mod.workflow,
    models: used.map((name) => modelSpec(name, config.models[name], config)),
    cast: castSpec(cast),
    trainer: Object.fromEntries(used.map((name) => [name, trainerOptions(config.models[name], config)])),
    rewards: weightedRewards(mod.rewards, config.rewardWeights),
    advantage: {
      estimator: a.estimator,
      options: {
        normalize: a.normalize,
        ...(critic && { gamma: a.gamma, lambda: a.lambda }),
        ...(a.estimator === "reinforce-pp" && { gamma: a.gamma }),
        ...(group && { groupBy: a.groupBy }),
      },
    },
    updateOrder: a.updateOrder,
    criticWarmupSteps: a.criticWarmupSteps,
    concurrency: config.schedule.concurrency,
    evalConcurrency: config.eval.concurrency,
    sampling: Object.fromEntries(
      (["temperature", "topP", "topK"] as const).filter((k) => config.sampling[k] !== undefined).map((k) => [k, config.sampling[k]]),
    ),
    roleSampling: config.sampling.roles,
    maxNewTokens: config.sampling.maxNewTokens,
    episodeTimeoutMs: config.schedule.episodeTimeoutMs,
    seed: config.seed,
    ...(config.schedule.maxStaleness > 0 && { maxStaleness: config.schedule.maxStaleness }),
  };
}
