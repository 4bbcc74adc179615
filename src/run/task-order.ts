// Which training tasks a step draws: every epoch visits each task once, in an order seeded by the
// run's seed and the epoch number, so a resumed run draws exactly what the uninterrupted one would.
import { createRng } from "../rng.js";
import type { DataCursor } from "./resumable-run.js";

/** The seed of epoch `epoch`'s order in a run seeded `seed`. */
export const epochSeed = (seed: number, epoch: number): number =>
  (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(epoch + 1, 0x85ebca6b)) >>> 0;

/** Task indices in the seeded order of `epoch`. */
function epochOrder(seed: number, epoch: number, n: number): Int32Array {
  const indices = Array.from({ length: n }, (_, i) => i);
  return Int32Array.from(createRng(epochSeed(seed, epoch)).shuffle(indices));
}

/** The next `count` task indices, advancing `cursor` in place. */
export function nextTasks(cursor: DataCursor, count: number, n: number, seed: number): number[] {
  const out: number[] = [];
  let order = epochOrder(seed, cursor.epoch, n);
  for (let k = 0; k < count; k++) {
    if (cursor.index >= n) {
      cursor.epoch++;
      cursor.index = 0;
      order = epochOrder(seed, cursor.epoch, n);
    }
    out.push(order[cursor.index++]);
  }
  return out;
}
