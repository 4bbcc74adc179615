// The update inside a worker group: PPO epochs over shuffled minibatches of cached samples; each
// minibatch is split into per-role chunks, guarded by approximate KL, back-propagated, clipped and
// stepped with the optimisers of exactly the units it trained. No sample data leaves this function.
import type { Decoder } from "../../engine/model/decoder.js";
import { savedFloatsPerToken } from "../../engine/model/weights.js";
import type { Rng } from "../../rng.js";
import { type ChunkResult, chunkLoss } from "./chunk-loss.js";
import { roleStats } from "./role-stats.js";
import { forwardTemperature } from "./forward-logprobs.js";
import type { TrainerConfig, TrainSample, UpdateReport } from "./types.js";
import { clipAndStep, deltaSq, policyUnitName, snapshotGrads, type TrainUnit } from "./units.js";

/** What one update trains: the policy (PPO terms), the critic (value loss), or both. */
export interface UpdateWhat {
  policy: boolean;
  critic: boolean;
}

/**
 * Floats a sample's forward keeps for its backward: every token's saved activations, and for each
 * scored (response) token its row of LM-head logits.
 */
function keptFloats(s: TrainSample, perToken: number, vocab: number): number {
  return s.tokens.length * perToken + s.oldLogp!.length * vocab;
}

/**
 * Samples of one role, adapter and forward temperature, cut at sequence boundaries into pieces
 * that keep at most `budget` floats (a single larger sample is a piece of its own), so an update's
 * memory is bounded by the budget, not by the minibatch; small models never reach it.
 */
function chunksOf(mb: readonly TrainSample[], cost: (s: TrainSample) => number, budget: number): TrainSample[][] {
  const groups = new Map<string, TrainSample[]>();
  for (const s of mb) {
    const k = JSON.stringify([s.role, s.adapter, forwardTemperature(s.temperature)]);
    groups.set(k, [...(groups.get(k) ?? []), s]);
  }
  const out: TrainSample[][] = [];
  for (const group of groups.values()) {
    let piece: TrainSample[] = [];
    let used = 0;
    for (const s of group) {
      const n = cost(s);
      if (piece.length > 0 && used + n > budget) {
        out.push(piece);
        piece = [];
        used = 0;
      }
      piece.push(s);
      used += n;
    }
    out.push(piece);
  }
  return out;
}

/** The units one chunk sends gradient to and that should be stepped. */
function unitsFor(r: TrainSample, units: ReadonlyMap<string, TrainUnit>, what: UpdateWhat): TrainUnit[] {
  const names: string[] = [];
  if (what.policy) {
    if (units.has("base")) names.push("base");
    if (r.adapter !== null) names.push(policyUnitName(r.adapter));
  }
  if (what.critic) names.push("value-head");
  return [...new Set(names)].map((n) => units.get(n)).filter((u): u is TrainUnit => u !== undefined);
}

/**
 * Runs PPO epochs over `samples` and returns per-role metrics. `pause`, awaited after each chunk's
 * backward, lets an asynchronous run's rollout (on the same thread) go on during the update; it
 * changes no number.
 *
 * @example
 * const report = await ppoUpdate(model, units, cfg, samples, { policy: true, critic: false }, createRng(1));
 */
export async function ppoUpdate(
  model: Decoder,
  units: ReadonlyMap<string, TrainUnit>,
  cfg: TrainerConfig,
  samples: readonly TrainSample[],
  what: UpdateWhat,
  rng: Rng,
  pause?: () => Promise<void>,
): Promise<UpdateReport> {
  const t0 = performance.now();
  const stats = roleStats();
  let steps = 0;
  let normSum = 0;
  let mbIndex = 0;
  const perToken = savedFloatsPerToken(model.config);
  const cost = (s: TrainSample) => keptFloats(s, perToken, model.config.vocabSize);
  const budget = (cfg.activationBudgetMb * 2 ** 20) / 4;
  for (let epoch = 0; epoch < cfg.epochs; epoch++) {
    const order = rng.shuffle(samples);
    const size = cfg.minibatchSize > 0 ? cfg.minibatchSize : order.length;
    for (let i = 0; i < order.length; i += size, mbIndex++) {
      const mb = order.slice(i, i + size);
      const d = { tokens: mb.reduce((a, s) => a + s.oldLogp.length, 0), seqs: mb.length };
      // each chunk runs forward and back before the next, so only one chunk's activations live
      model.zeroGrad();
      type Done = { r: Pick<ChunkResult, "role" | "metrics" | "tokens">; mine: TrainUnit[]; norm: number };
      const done: Done[] = [];
      const klTooHigh = (rs: readonly Done[]) =>
        what.policy &&
        cfg.approxKlSkip !== undefined &&
        !(rs.reduce((a, { r }) => a + r.metrics.approxKl * r.tokens, 0) / Math.max(d.tokens, 1) <= cfg.approxKlSkip);
      const chunks = chunksOf(mb, cost, budget);
      for (const c of chunks) {
        const { tape, grads, ...r } = chunkLoss(model, c, cfg, what, d);
        const entry: Done = { r, mine: unitsFor(c[0], units, what), norm: 0 };
        done.push(entry);
        // a minibatch of one chunk that the KL guard will skip needs no backward; over several
        // chunks the guard sees the whole minibatch only after every chunk's backward has run
        if (chunks.length === 1 && klTooHigh(done)) break;
        const before = snapshotGrads(entry.mine);
        model.backward(tape, grads);
        entry.norm = Math.sqrt(deltaSq(entry.mine, before));
        await pause?.();
      }
      if (klTooHigh(done)) {
        model.zeroGrad();
        for (const { r } of done) stats.skip(r.role);
        continue;
      }
      const touched = new Set<TrainUnit>();
      for (const { r, mine, norm } of done) {
        stats.add(r, mbIndex, norm);
        for (const u of mine) touched.add(u);
      }
      const norm = clipAndStep([...touched], cfg.maxGradNorm);
      model.zeroGrad();
      if (Number.isFinite(norm)) {
        steps++;
        normSum += norm;
      }
    }
  }
  return { roles: stats.report(samples), steps, gradNorm: steps ? normSum / steps : 0, ms: performance.now() - t0 };
}
