// Deterministic training windows over a token stream with an explicit cursor: each epoch takes a
// seeded random offset and a seeded shuffle of stride-seqLen windows, so (seed, epoch, index)
// fully determines every batch and a checkpoint only needs the cursor. Never mutates the stream.
import { createRng } from "../rng.js";
import { epochSeed } from "./task-order.js";
import { MasoError } from "../errors.js";
import type { DataCursor } from "./resumable-run.js";

export interface WindowSampler {
  /** Windows per epoch. */
  readonly perEpoch: number;
  /** The next `count` windows (each seqLen tokens), advancing `cursor` in place. */
  next(cursor: DataCursor, count: number): number[][];
}

function epochOrder(seed: number, epoch: number, n: number, seqLen: number, streamLen: number): Int32Array {
  const rng = createRng(epochSeed(seed, epoch));
  const slack = streamLen - n * seqLen; // >= 1: room for a random shift each epoch
  const offset = Math.floor(rng.next() * slack);
  return Int32Array.from(rng.shuffle(Array.from({ length: n }, (_, i) => offset + i * seqLen)));
}

/**
 * Builds a sampler of seqLen-token windows from `stream`.
 * @example
 * const s = windowSampler(stream, 64, seed); const cursor = { epoch: 0, index: 0 };
 * const batch = s.next(cursor, 8);
 */
export function windowSampler(stream: Int32Array, seqLen: number, seed: number): WindowSampler {
  const perEpoch = Math.floor((stream.length - 1) / seqLen);
  if (perEpoch < 1)
    throw new MasoError(
      "PRETRAIN_DATA",
      `the token stream (${stream.length} tokens) is shorter than one sequence (${seqLen + 1})`,
      "use more text or a shorter --seq-len",
    );
  let cached: { epoch: number; order: Int32Array } | null = null;
  return {
    perEpoch,
    next(cursor, count) {
      const out: number[][] = [];
      for (let b = 0; b < count; b++) {
        if (cursor.index >= perEpoch) {
          cursor.epoch++;
          cursor.index = 0;
        }
        if (cached?.epoch !== cursor.epoch)
          cached = { epoch: cursor.epoch, order: epochOrder(seed, cursor.epoch, perEpoch, seqLen, stream.length) };
        const start = cached.order[cursor.index++];
        out.push(Array.from(stream.subarray(start, start + seqLen)));
      }
      return out;
    },
  };
}
