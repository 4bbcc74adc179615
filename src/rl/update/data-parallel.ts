// Data-parallel updates: the ranks of one model share each minibatch. Rank 0 splits it by sequence,
// every rank runs forward and backward on its share, rank 0 sums the gradients in rank order and
// sends the sum back, and every rank clips and steps with it, so their weights and optimiser
// states stay equal without weights travelling. The transport lives elsewhere (a DataParallelPeers).
import type { Decoder } from "../../engine/model/decoder.js";
import { type ChunkResult, chunkLoss, type Denominators } from "./chunk-loss.js";
import type { LogprobInput, LogprobOutput } from "./forward-logprobs.js";
import type { TrainerConfig, TrainSample } from "./types.js";
import { clipAndStep, deltaSq, snapshotGrads, type TrainUnit } from "./units.js";

/** What one share of a minibatch trains. */
export interface UpdateWhat {
  policy: boolean;
  critic: boolean;
}

/** One chunk's figures, as a rank reports them (its gradient stays in the rank's buffers). */
export interface PieceResult extends Pick<ChunkResult, "role" | "metrics" | "tokens"> {
  /** ‖gradient‖ of this chunk alone. */
  norm: number;
  /** The units the chunk trains, by name. */
  units: string[];
}

export interface ShareRequest {
  what: UpdateWhat;
  /** The whole minibatch's denominators, so the shares' losses add up to the minibatch loss. */
  d: Denominators;
  samples: TrainSample[];
}

export interface ShareResult {
  pieces: PieceResult[];
  /** The summed gradient of every unit the share trained, by unit name. */
  grads: Map<string, Float32Array>;
}

/** The step every peer takes with the summed gradients (null: the minibatch was skipped). */
export interface SharedStep {
  units: { name: string; lr: number; grads: Float32Array }[] | null;
}

/** Which log-prob forward a sample needs: the policy (old log-probs, values) or the reference. */
export type ForwardKind = "policy" | "reference";

/** What a log-prob forward gives a sample that scoring keeps. */
export type ForwardOutput = Pick<LogprobOutput, "logp" | "values">;

/** Rank 0's view of the other ranks of its model (ranks 1 … count). */
export interface DataParallelPeers {
  readonly count: number;
  /**
   * Resolves once the requests made so far have left this process. Rank 0 awaits it before its own
   * share: a transport that writes from the event loop would otherwise hold the peers' requests
   * until that share is done, and the ranks would take turns instead of working at once.
   */
  sent(): Promise<void>;
  /** Rank `rank`'s log-prob forward of its share of the samples scoring needs. */
  forwards(rank: number, kind: ForwardKind, samples: readonly LogprobInput[]): Promise<ForwardOutput[]>;
  /** Rank `rank`'s gradients for its share of one minibatch. */
  gradients(rank: number, req: ShareRequest): Promise<ShareResult>;
  /** Every peer steps with the summed gradients, or drops its own when `units` is null. */
  step(req: SharedStep): Promise<void>;
}

/**
 * Splits a minibatch into `ranks` shares by sequence: each sample, in minibatch order, goes to the
 * rank with the least cost so far (the lowest rank on a tie), so the split is fixed by the samples.
 *
 * @example
 * splitShares([a, b, c], 2, (s) => s.tokens.length); // [[a, c], [b]] when a and b cost the same
 */
export function splitShares<T>(mb: readonly T[], ranks: number, cost: (s: T) => number): T[][] {
  const out: T[][] = Array.from({ length: ranks }, () => []);
  const load = new Array<number>(ranks).fill(0);
  for (const s of mb) {
    let r = 0;
    for (let i = 1; i < ranks; i++) if (load[i] < load[r]) r = i;
    out[r].push(s);
    load[r] += cost(s);
  }
  return out;
}

/**
 * One kind of log-prob forward over `samples`, shared by sequence among the ranks like a minibatch:
 * this rank's share runs in `local` while the peers run theirs; outputs come back in sample order.
 */
export async function sharedForward(
  peers: DataParallelPeers,
  local: (kind: ForwardKind, samples: readonly LogprobInput[]) => ForwardOutput[],
  kind: ForwardKind,
  samples: readonly LogprobInput[],
): Promise<ForwardOutput[]> {
  const shares = splitShares(
    samples.map((_, i) => i),
    peers.count + 1,
    (i) => samples[i].tokens.length,
  );
  const pick = (idx: readonly number[]) => idx.map((i) => samples[i]);
  const remote = Promise.all(shares.slice(1).map((idx, r) => (idx.length ? peers.forwards(r + 1, kind, pick(idx)) : [])));
  await peers.sent();
  const out: ForwardOutput[] = new Array(samples.length);
  const put = (idx: readonly number[], got: readonly ForwardOutput[]) => {
    if (got.length !== idx.length) throw new Error(`data-parallel: a rank scored ${got.length} of ${idx.length} samples`);
    idx.forEach((i, k) => {
      out[i] = got[k];
    });
  };
  put(shares[0], shares[0].length ? local(kind, pick(shares[0])) : []);
  for (const [r, got] of (await remote).entries()) put(shares[r + 1], got);
  return out;
}

/** A chunk's forward, loss and backward into the units' gradient buffers; returns its figures. */
export function backwardChunk(
  model: Decoder,
  chunk: readonly TrainSample[],
  mine: readonly TrainUnit[],
  cfg: TrainerConfig,
  what: UpdateWhat,
  d: Denominators,
): PieceResult {
  const { tape, grads, ...r } = chunkLoss(model, chunk, cfg, what, d);
  const before = snapshotGrads(mine);
  model.backward(tape, grads);
  return { ...r, norm: Math.sqrt(deltaSq(mine, before)), units: mine.map((u) => u.name) };
}

/**
 * The figures of one role's pieces of a minibatch as if one chunk had held them: losses add up
 * (their denominators are the minibatch's), per-token means are weighted by tokens, and the
 * gradient norm is the root of the summed squares (an approximation; rank 0 replaces it with the
 * exact norm of the summed gradient where a role alone trains its units).
 */
export function mergePieces(pieces: readonly PieceResult[]): PieceResult[] {
  const byRole = new Map<string, PieceResult[]>();
  for (const p of pieces) byRole.set(p.role, [...(byRole.get(p.role) ?? []), p]);
  return [...byRole.values()].map((ps) => {
    if (ps.length === 1) return ps[0];
    const tokensOf = (of: readonly PieceResult[]) => of.reduce((a, p) => a + p.tokens, 0);
    const tokens = tokensOf(ps);
    /** The token-weighted mean of `f` over pieces `of`. */
    const mean = (f: (p: PieceResult) => number, of: readonly PieceResult[] = ps) =>
      of.reduce((a, p) => a + f(p) * p.tokens, 0) / Math.max(tokensOf(of), 1);
    const sum = (f: (p: PieceResult) => number) => ps.reduce((a, p) => a + f(p), 0);
    // a piece without reference log-probs has no klRef: the mean is over the pieces that have one
    const withRef = ps.filter((p) => Number.isFinite(p.metrics.klRef));
    return {
      role: ps[0].role,
      tokens,
      norm: Math.sqrt(sum((p) => p.norm ** 2)),
      units: [...new Set(ps.flatMap((p) => p.units))],
      metrics: {
        pgLoss: sum((p) => p.metrics.pgLoss),
        valueLoss: sum((p) => p.metrics.valueLoss),
        clipFrac: mean((p) => p.metrics.clipFrac),
        approxKl: mean((p) => p.metrics.approxKl),
        entropy: mean((p) => p.metrics.entropy),
        explainedVariance: mean((p) => p.metrics.explainedVariance),
        klRef: withRef.length ? mean((p) => p.metrics.klRef, withRef) : Number.NaN,
      },
    };
  });
}

/** A peer's side of the step: the summed gradients replace its own, then the same clip and step as rank 0. */
export function applySharedStep(model: Decoder, units: ReadonlyMap<string, TrainUnit>, cfg: TrainerConfig, req: SharedStep): number {
  if (req.units === null) {
    model.zeroGrad();
    return 0;
  }
  const mine = req.units.map(({ name, lr, grads }) => {
    const u = units.get(name);
    if (!u || u.grads.data.length !== grads.length) throw new Error(`data-parallel step: unit ${name} does not match this rank's`);
    u.grads.data.set(grads);
    u.lr = lr;
    return u;
  });
  const norm = clipAndStep(mine, cfg.maxGradNorm);
  model.zeroGrad();
  return norm;
}
