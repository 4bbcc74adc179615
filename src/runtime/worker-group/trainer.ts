// A worker group's update side: a PPO update over its rewarded samples (bumping the weight version),
// the log-ratios HAPPO's next agent needs, and the KL-to-reference diagnostics.
import type { Decoder } from "../../engine/model/decoder.js";
import { createRng } from "../../rng.js";
import { MasoError } from "../../errors.js";
import { actionLogRatios, happoKey } from "../../rl/advantages/happo.js";
import { concat } from "../../rl/concat.js";
import { klTerm } from "../../rl/kl-estimators.js";
import type { DataParallelPeers } from "../../rl/update/data-parallel.js";
import { ppoUpdate } from "../../rl/update/ppo-update.js";
import { allDropped, emptyImportance, type ImportanceStats, importanceWeights } from "../../rl/update/off-policy.js";
import { forwardLogprobs } from "../../rl/update/forward-logprobs.js";
import type { OffPolicyMetrics, TrainerConfig, TrainSample } from "../../rl/update/types.js";
import { scheduleUnits, type TrainUnit } from "../../rl/update/units.js";
import type { DiagnosticsResponse, LogRatio, UpdateRequest, UpdateResponse } from "../protocol/messages.js";
import type { ResolvedModelSpec } from "./models.js";
import { type CachedSample, type SampleCache, toTrainSample } from "./sample-cache.js";
import type { LogprobForwards } from "./logprob-forwards.js";
import { onKernelThreads, onKernelThreadsAsync } from "./kernel-threads.js";
import type { WeightVersions } from "./weight-versions.js";

/** What one model's trainer works on. */
export interface TrainerParts {
  spec: Pick<ResolvedModelSpec, "name" | "train">;
  model: Decoder;
  units: ReadonlyMap<string, TrainUnit>;
  cfg: TrainerConfig;
  cache: SampleCache;
  forwards: Pick<LogprobForwards, "referenceForward">;
  versions: WeightVersions;
  /** Asynchronous RL: the most versions a trained sample may lag (η); absent for a synchronous run. */
  staleness?: number;
  /** The model's other ranks, when its updates are data-parallel (set by a worker host at rank 0). */
  peers?: () => DataParallelPeers | null;
}

/** Σ(log π_new − log π_old) per sample, with the weights in place now. */
function logRatiosNow(model: Decoder, samples: readonly CachedSample[]): LogRatio[] {
  const after = forwardLogprobs(model, samples);
  const offsets = [0];
  for (const s of samples) offsets.push(offsets[offsets.length - 1] + s.oldLogp!.length);
  const ratios = actionLogRatios(
    { offsets, mask: new Uint8Array(offsets[offsets.length - 1]).fill(1) },
    concat(after.map((a) => a.logp)),
    concat(samples.map((s) => s.oldLogp!)),
  );
  return samples.map((s, i) => ({ episode: s.episode, turn: s.turn, logRatio: ratios[i] }));
}

/**
 * Asynchronous RL: the samples the update of step `step` (0-based) trains — those at most
 * `staleness` steps behind the weights it starts from, which hold every step before it (the others
 * are dropped and counted) — each with its advantages weighted by the truncated importance weight
 * π_prox/π_behav (off-policy.ts), and per role the figures. Lag counts steps, not weight versions:
 * a step may update a model several times (a critic, HAPPO's agents one by one).
 */
function offPolicySamples(
  ready: readonly CachedSample[],
  step: number,
  staleness: number,
  cfg: TrainerConfig,
  factor: (s: CachedSample) => number,
): { samples: CachedSample[]; train: TrainSample[]; offPolicy: Record<string, OffPolicyMetrics> } {
  const per = new Map<string, { lag: Record<string, number>; dropped: number; w: ImportanceStats }>();
  const samples: CachedSample[] = [];
  const train: TrainSample[] = [];
  for (const s of ready) {
    const m = per.get(s.role) ?? { lag: {}, dropped: 0, w: emptyImportance() };
    per.set(s.role, m);
    const lag = step - 1 - s.trainedThrough;
    if (lag > staleness) {
      m.dropped++;
      continue;
    }
    m.lag[lag] = (m.lag[lag] ?? 0) + 1;
    const w =
      s.behaviourLogp && s.oldLogp && s.behaviourLogp.length === s.oldLogp.length
        ? importanceWeights(s.oldLogp, s.behaviourLogp, cfg.importanceCap, cfg.policyLoss === "action", m.w)
        : undefined;
    samples.push(s);
    train.push(toTrainSample(s, factor(s), w));
  }
  const offPolicy: Record<string, OffPolicyMetrics> = {};
  for (const [role, m] of per)
    offPolicy[role] = {
      lag: m.lag,
      dropped: m.dropped,
      importanceMean: m.w.tokens ? m.w.sum / m.w.tokens : Number.NaN,
      importanceMax: m.w.tokens ? m.w.max : Number.NaN,
      importanceClipped: m.w.tokens ? m.w.clipped / m.w.tokens : Number.NaN,
    };
  return { samples, train, offPolicy };
}

/**
 * The update and diagnostics of one model. `updates` counts updates so far: it seeds minibatch
 * shuffling, so a checkpoint load sets it back.
 *
 * @example
 * const t = trainer(parts); t.update({ policy: true, critic: false }); t.updates; // 1
 */
export function trainer({ spec, model, units, cfg, cache, forwards, versions, staleness, peers }: TrainerParts) {
  let updates = 0;
  const metaOf = (s: CachedSample) => ({
    episode: s.episode,
    role: s.role,
    model: spec.name,
    task: s.groupKey ?? "",
    turn: s.turn,
    reward: 0,
  });
  const rewarded = (roles?: readonly string[], batch?: number) =>
    cache.all(batch).filter((s) => s.reward !== null && s.advantages !== null && (!roles || roles.includes(s.role)));

  const update = async (req: UpdateRequest): Promise<UpdateResponse> => {
    if (spec.train === "frozen")
      throw new MasoError("MODEL_FROZEN", `model "${spec.name}" is frozen`, "set train: 'full' or 'lora' to update it");
    const ready = rewarded(req.roles, req.batch);
    const factor = (s: CachedSample) => (req.happo ? (req.happo.factors[happoKey(metaOf(s), req.happo.by)] ?? 1) : 1);
    const { samples, train, offPolicy } =
      staleness === undefined
        ? { samples: ready, train: ready.map((s) => toTrainSample(s, factor(s))), offPolicy: null }
        : offPolicySamples(ready, req.step ?? updates, staleness, cfg, factor);
    scheduleUnits(units.values(), cfg, req.step ?? updates);
    const what = { policy: req.policy, critic: req.critic };
    const rng = createRng(cfg.seed + 7919 * updates++);
    // asynchronous: one kernel thread (kernel-threads.ts), pausing between chunks so the rollout of a later step goes on
    const report =
      staleness === undefined
        ? await ppoUpdate(model, units, cfg, train, what, rng, { peers: peers?.() })
        : await onKernelThreadsAsync(1, (pause) => ppoUpdate(model, units, cfg, train, what, rng, { pause }));
    // a role whose every sample was dropped trained nothing, but its row still counts them
    if (offPolicy) for (const [role, m] of Object.entries(offPolicy)) (report.roles[role] ??= allDropped(m)).offPolicy = m;
    const version = versions.bump("update");
    const ratios = () => (staleness === undefined ? logRatiosNow(model, samples) : onKernelThreads(1, () => logRatiosNow(model, samples)));
    const out: UpdateResponse = req.returnLogRatios ? { report, logRatios: ratios() } : { report };
    return staleness === undefined ? out : { ...out, version };
  };

  /** Per role: mean k3 KL of the current policy to the reference, and how far the reference moved since scoring. */
  const diagnostics = (roles?: readonly string[], batch?: number): DiagnosticsResponse => {
    const mine = cache.all(batch).filter((s) => s.refLogp !== null && (!roles || roles.includes(s.role)));
    const cur = forwardLogprobs(model, mine);
    const refNow = forwards.referenceForward(mine) ?? cur;
    const out: DiagnosticsResponse["roles"] = {};
    mine.forEach((s, i) => {
      const o = (out[s.role] ??= { samples: 0, klRef: 0, refDrift: 0 });
      o.samples++;
      let kl = 0;
      for (let t = 0; t < cur[i].logp.length; t++) {
        kl += klTerm(cur[i].logp[t], s.refLogp![t], "k3")[0];
        o.refDrift = Math.max(o.refDrift, Math.abs(refNow[i].logp[t] - s.refLogp![t]));
      }
      o.klRef += kl / Math.max(cur[i].logp.length, 1);
    });
    for (const o of Object.values(out)) o.klRef /= o.samples;
    return { roles: out };
  };

  return {
    update,
    diagnostics,
    get updates() {
      return updates;
    },
    set updates(n: number) {
      updates = n;
    },
  };
}
