// A worker group's update side: a PPO update over its rewarded samples (bumping the weight version),
// the log-ratios HAPPO's next agent needs, and the KL-to-reference diagnostics.
import type { Decoder } from "../engine/model/decoder.js";
import { createRng } from "../rng.js";
import { MasoError } from "../errors.js";
import { actionLogRatios, happoKey } from "../rl/advantages/happo.js";
import { concat } from "../rl/concat.js";
import { klTerm } from "../rl/kl-estimators.js";
import { ppoUpdate } from "../rl/update/ppo-update.js";
import { scoreSamples } from "../rl/update/score.js";
import type { TrainerConfig } from "../rl/update/types.js";
import { scheduleUnits, type TrainUnit } from "../rl/update/units.js";
import type { DiagnosticsResponse, LogRatio, UpdateRequest, UpdateResponse } from "./messages.js";
import type { ResolvedModelSpec } from "./models.js";
import { type CachedSample, type SampleCache, toTrainSample } from "./sample-cache.js";
import type { SampleScorer } from "./scorer.js";
import type { WeightVersions } from "./weight-versions.js";

/** What one model's trainer works on. */
export interface TrainerParts {
  spec: Pick<ResolvedModelSpec, "name" | "train">;
  model: Decoder;
  units: ReadonlyMap<string, TrainUnit>;
  cfg: TrainerConfig;
  cache: SampleCache;
  scorer: Pick<SampleScorer, "referenceForward">;
  versions: WeightVersions;
}

/** Σ(log π_new − log π_old) per sample, scored with the weights in place now. */
function logRatiosNow(model: Decoder, samples: readonly CachedSample[]): LogRatio[] {
  const after = scoreSamples(model, samples);
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
 * The update and diagnostics of one model. `updates` counts updates so far: it seeds minibatch
 * shuffling, so a checkpoint load sets it back.
 *
 * @example
 * const t = trainer(parts); t.update({ policy: true, critic: false }); t.updates; // 1
 */
export function trainer({ spec, model, units, cfg, cache, scorer, versions }: TrainerParts) {
  let updates = 0;
  const metaOf = (s: CachedSample) => ({
    episode: s.episode,
    role: s.role,
    model: spec.name,
    task: s.groupKey ?? "",
    turn: s.turn,
    reward: 0,
  });
  const rewarded = (roles?: readonly string[]) =>
    cache.all().filter((s) => s.reward !== null && s.advantages !== null && (!roles || roles.includes(s.role)));

  const update = (req: UpdateRequest): UpdateResponse => {
    if (spec.train === "frozen")
      throw new MasoError("MODEL_FROZEN", `model "${spec.name}" is frozen`, "set train: 'full' or 'lora' to update it");
    const samples = rewarded(req.roles);
    const factor = (s: CachedSample) => (req.happo ? (req.happo.factors[happoKey(metaOf(s), req.happo.by)] ?? 1) : 1);
    const train = samples.map((s) => toTrainSample(s, factor(s)));
    scheduleUnits(units.values(), cfg, req.step ?? updates);
    const report = ppoUpdate(model, units, cfg, train, { policy: req.policy, critic: req.critic }, createRng(cfg.seed + 7919 * updates++));
    versions.bump("update");
    return req.returnLogRatios ? { report, logRatios: logRatiosNow(model, samples) } : { report };
  };

  /** Per role: mean k3 KL of the current policy to the reference, and how far the reference moved since scoring. */
  const diagnostics = (roles?: readonly string[]): DiagnosticsResponse => {
    const mine = cache.all().filter((s) => s.refLogp !== null && (!roles || roles.includes(s.role)));
    const cur = scoreSamples(model, mine);
    const refNow = scorer.referenceForward(mine) ?? cur;
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
