// Which training tasks a step draws: every epoch visits each task once, in an order seeded by the
// run's seed and the epoch number, so a resumed run draws exactly what the uninterrupted one would.
import { createRng } from "../engine/model/init.js";
import type { TaskCursor } from "./checkpoint-parts.js";

const mix = (seed: number, epoch: number) => (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(epoch + 1, 0x85ebca6b)) >>> 0;

/** Task indices in the seeded order of `epoch`. */
function epochOrder(seed: number, epoch: number, n: number): Int32Array {
  const rng = createRng(mix(seed, epoch));
  const order = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The next `count` task indices, advancing `cursor` in place. */
export function nextTasks(cursor: TaskCursor, count: number, n: number, seed: number): number[] {
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
