// Packs variable-length sequences into one token buffer with per-sequence boundaries (no padding,
// no compute on padding) and lists the rows whose next-token log-prob is wanted (the loss mask).
// Validates everything the native kernels would otherwise trust.
import { MasoError } from "../../errors.js";
import type { ModelConfig } from "../config.js";

/** One sequence of a batch. */
export interface SequenceInput {
  /** Token ids, prompt followed by response. */
  tokens: ArrayLike<number>;
  /**
   * scoreMask[t] = 1 asks for log p(tokens[t] | tokens[<t]) (and its entropy / value); only these
   * tokens can carry gradient. Default: every t >= 1. scoreMask[0] must be 0 (nothing predicts it).
   */
  scoreMask?: ArrayLike<number>;
  /** LoRA adapter to apply, or null/undefined for the base weights. */
  adapter?: string | null;
}

/** Contiguous rows that use one adapter (null = base only). */
export interface AdapterSegment {
  adapter: string | null;
  /** token rows [r0, r1) */
  r0: number;
  r1: number;
}

export interface PackedBatch {
  /** N packed tokens, B sequences, M scored tokens */
  N: number;
  B: number;
  M: number;
  ids: Int32Array; // (N)
  pos: Int32Array; // (N) position within its sequence
  starts: Int32Array; // (B+1) sequence offsets into N
  rows: Int32Array; // (M) hidden row that predicts each scored token = its packed index - 1
  targets: Int32Array; // (M) the scored token ids
  scoredStarts: Int32Array; // (B+1) offsets of each sequence's scored tokens into M
  scoredPositions: Int32Array; // (M) position t of each scored token within its sequence
  segments: AdapterSegment[];
}

export function packBatch(cfg: ModelConfig, seqs: readonly SequenceInput[], hasAdapter: (name: string) => boolean): PackedBatch {
  if (seqs.length === 0) throw new MasoError("BATCH_EMPTY", "a batch needs at least one sequence");
  const B = seqs.length;
  const starts = new Int32Array(B + 1);
  const scoredStarts = new Int32Array(B + 1);
  for (let b = 0; b < B; b++) {
    const s = seqs[b];
    const T = s.tokens.length;
    if (T < 1) throw new MasoError("BATCH_SEQUENCE", `sequence ${b} is empty`);
    if (T > cfg.maxPositionEmbeddings) {
      throw new MasoError(
        "CONTEXT_TOO_LONG",
        `sequence ${b} has ${T} tokens, the model accepts at most ${cfg.maxPositionEmbeddings}`,
        "truncate the prompt (oldest history first) or lower max new tokens",
      );
    }
    if (s.adapter != null && !hasAdapter(s.adapter)) {
      throw new MasoError("ADAPTER_UNKNOWN", `sequence ${b} asks for adapter '${s.adapter}', which this model does not have`);
    }
    let scored = T - 1;
    if (s.scoreMask) {
      if (s.scoreMask.length !== T) {
        throw new MasoError("BATCH_MASK", `sequence ${b}: scoreMask has ${s.scoreMask.length} entries for ${T} tokens`);
      }
      if (s.scoreMask[0]) throw new MasoError("BATCH_MASK", `sequence ${b}: scoreMask[0] is set, but no token predicts the first one`);
      scored = 0;
      for (let t = 1; t < T; t++) if (s.scoreMask[t]) scored++;
    }
    starts[b + 1] = starts[b] + T;
    scoredStarts[b + 1] = scoredStarts[b] + scored;
  }
  const N = starts[B];
  const M = scoredStarts[B];
  const ids = new Int32Array(N);
  const pos = new Int32Array(N);
  const rows = new Int32Array(M);
  const targets = new Int32Array(M);
  const scoredPositions = new Int32Array(M);
  const segments: AdapterSegment[] = [];
  const V = cfg.vocabSize;
  for (let b = 0; b < B; b++) {
    const s = seqs[b];
    const off = starts[b];
    let m = scoredStarts[b];
    for (let t = 0; t < s.tokens.length; t++) {
      const id = s.tokens[t];
      if (!Number.isInteger(id) || id < 0 || id >= V) {
        throw new MasoError("TOKEN_RANGE", `sequence ${b}, position ${t}: token id ${id} is outside [0, ${V})`);
      }
      ids[off + t] = id;
      pos[off + t] = t;
      if (t >= 1 && (s.scoreMask ? s.scoreMask[t] : 1)) {
        rows[m] = off + t - 1;
        targets[m] = id;
        scoredPositions[m] = t;
        m++;
      }
    }
    const adapter = s.adapter ?? null;
    const last = segments[segments.length - 1];
    if (last && last.adapter === adapter) last.r1 = starts[b + 1];
    else segments.push({ adapter, r0: off, r1: starts[b + 1] });
  }
  return { N, B, M, ids, pos, starts, rows, targets, scoredStarts, scoredPositions, segments };
}
