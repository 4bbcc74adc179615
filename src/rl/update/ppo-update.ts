// The update inside a worker group: PPO epochs over shuffled minibatches of cached samples; each
// minibatch is split into per-role chunks, guarded by approximate KL, back-propagated, clipped and
// stepped with the optimisers of exactly the units it trained. No sample data leaves this function,
// except to the model's other ranks in a data-parallel update (data-parallel.ts).
import type { Decoder } from "../../engine/model/decoder.js";
import { savedFloatsPerToken } from "../../engine/model/weights.js";
import type { Rng } from "../../rng.js";
import { type ChunkResult, chunkLoss, type Denominators } from "./chunk-loss.js";
import {
  backwardChunk,
  type DataParallelPeers,
  mergePieces,
  type PieceResult,
  type ShareRequest,
  type ShareResult,
  splitShares,
  type UpdateWhat,
} from "./data-parallel.js";
import { roleStats } from "./role-stats.js";
import { forwardTemperature } from "./forward-logprobs.js";
import type { TrainerConfig, TrainSample, UpdateReport } from "./types.js";
import { clipAndStep, deltaSq, policyUnitName, snapshotGrads, type TrainUnit } from "./units.js";

export type { UpdateWhat };

/**
 * Floats a sample's forward keeps for its backward: every token's saved activations, and for each
 * scored (response) token its row of LM-head logits.
 */
function keptFloats(s: TrainSample, perToken: number, vocab: number): number {
  return s.tokens.length * perToken + s.oldLogp!.length * vocab;
}

/** What a chunk of samples costs in kept floats, and the budget a chunk may not pass (activationBudgetMb). */
function chunkBudget(model: Decoder, cfg: TrainerConfig): { cost: (s: TrainSample) => number; floats: number } {
  const perToken = savedFloatsPerToken(model.config);
  return { cost: (s) => keptFloats(s, perToken, model.config.vocabSize), floats: (cfg.activationBudgetMb * 2 ** 20) / 4 };
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

/** One chunk's figures, the units it trained and the norm of its gradient. */
type Done = { r: Pick<ChunkResult, "role" | "metrics" | "tokens">; mine: TrainUnit[]; norm: number };

/** One minibatch on this rank alone: each chunk runs forward and back before the next, so only one chunk's activations live. */
async function localMinibatch(
  model: Decoder,
  chunks: readonly TrainSample[][],
  units: ReadonlyMap<string, TrainUnit>,
  cfg: TrainerConfig,
  what: UpdateWhat,
  d: Denominators,
  klTooHigh: (rs: readonly Done[]) => boolean,
  pause?: () => Promise<void>,
): Promise<Done[]> {
  const done: Done[] = [];
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
  return done;
}

/**
 * One minibatch shared with the other ranks of the model (data-parallel.ts): this rank's share runs
 * here while the peers run theirs; their gradients are added to this rank's in rank order, so the
 * units' buffers hold the whole minibatch's gradient, as on one rank up to the order of the sums.
 */
async function sharedMinibatch(
  model: Decoder,
  mb: readonly TrainSample[],
  units: ReadonlyMap<string, TrainUnit>,
  cfg: TrainerConfig,
  what: UpdateWhat,
  d: Denominators,
  peers: DataParallelPeers,
  budget: ReturnType<typeof chunkBudget>,
): Promise<Done[]> {
  const shares = splitShares(mb, peers.count + 1, budget.cost);
  const remote = Promise.all(
    shares.slice(1).map((share, i) => (share.length ? peers.gradients(i + 1, { what, d, samples: share }) : null)),
  );
  await peers.sent();
  const pieces: PieceResult[] = chunksOf(shares[0], budget.cost, budget.floats).flatMap((c) =>
    c.length ? [backwardChunk(model, c, unitsFor(c[0], units, what), cfg, what, d)] : [],
  );
  for (const res of await remote) {
    if (!res) continue;
    pieces.push(...res.pieces);
    for (const [name, g] of res.grads) {
      const acc = units.get(name)?.grads.data;
      if (!acc || acc.length !== g.length) throw new Error(`data-parallel: a peer sent gradients for unit ${name} this rank lacks`);
      for (let j = 0; j < g.length; j++) acc[j] += g[j];
    }
  }
  const merged = mergePieces(pieces);
  // a role alone on its units has the norm of their summed gradient, as on one rank
  const alone = (p: PieceResult) => merged.every((q) => q === p || !q.units.some((u) => p.units.includes(u)));
  const normOf = (p: PieceResult) => Math.sqrt(p.units.reduce((a, n) => a + units.get(n)!.grads.data.reduce((x, g) => x + g * g, 0), 0));
  return merged.map((p) => ({ r: p, mine: p.units.map((n) => units.get(n)!), norm: alone(p) ? normOf(p) : p.norm }));
}

/**
 * A peer's side of one shared minibatch: forward and backward over its share, chunked as rank 0
 * chunks; the gradients stay in its buffers (returned by reference) until the shared step.
 */
export function shareGradients(model: Decoder, units: ReadonlyMap<string, TrainUnit>, cfg: TrainerConfig, req: ShareRequest): ShareResult {
  const budget = chunkBudget(model, cfg);
  model.zeroGrad();
  const pieces = chunksOf(req.samples, budget.cost, budget.floats).map((c) =>
    backwardChunk(model, c, unitsFor(c[0], units, req.what), cfg, req.what, req.d),
  );
  const grads = new Map<string, Float32Array>();
  for (const p of pieces) for (const name of p.units) grads.set(name, units.get(name)!.grads.data);
  return { pieces, grads };
}

/**
 * Runs PPO epochs over `samples` and returns per-role metrics. `pause`, awaited after each chunk's
 * backward, lets an asynchronous run's rollout (on the same thread) go on during the update; it
 * changes no number. With `peers`, every minibatch is shared with the model's other ranks, which
 * take the same optimiser steps.
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
  o: { pause?: () => Promise<void>; peers?: DataParallelPeers | null } = {},
): Promise<UpdateReport> {
  const t0 = performance.now();
  const stats = roleStats();
  let steps = 0;
  let normSum = 0;
  let mbIndex = 0;
  const budget = chunkBudget(model, cfg);
  const peers = o.peers && o.peers.count > 0 ? o.peers : null;
  for (let epoch = 0; epoch < cfg.epochs; epoch++) {
    const order = rng.shuffle(samples);
    const size = cfg.minibatchSize > 0 ? cfg.minibatchSize : order.length;
    for (let i = 0; i < order.length; i += size, mbIndex++) {
      const mb = order.slice(i, i + size);
      const d = { tokens: mb.reduce((a, s) => a + s.oldLogp.length, 0), seqs: mb.length };
      model.zeroGrad();
      const klTooHigh = (rs: readonly Done[]) =>
        what.policy &&
        cfg.approxKlSkip !== undefined &&
        !(rs.reduce((a, { r }) => a + r.metrics.approxKl * r.tokens, 0) / Math.max(d.tokens, 1) <= cfg.approxKlSkip);
      const done = peers
        ? await sharedMinibatch(model, mb, units, cfg, what, d, peers, budget)
        : await localMinibatch(model, chunksOf(mb, budget.cost, budget.floats), units, cfg, what, d, klTooHigh, o.pause);
      if (klTooHigh(done)) {
        model.zeroGrad();
        await peers?.step({ units: null });
        for (const { r } of done) stats.skip(r.role);
        continue;
      }
      const touched = new Set<TrainUnit>();
      for (const { r, mine, norm } of done) {
        stats.add(r, mbIndex, norm);
        for (const u of mine) touched.add(u);
      }
      // the peers get the summed gradients before clipping scales them here
      const shared = peers?.step({ units: [...touched].map((u) => ({ name: u.name, lr: u.lr, grads: u.grads.data.slice() })) });
      const norm = clipAndStep([...touched], cfg.maxGradNorm);
      model.zeroGrad();
      await shared;
      if (Number.isFinite(norm)) {
        steps++;
        normSum += norm;
      }
    }
  }
  return { roles: stats.report(samples), steps, gradNorm: steps ? normSum / steps : 0, ms: performance.now() - t0 };
}
