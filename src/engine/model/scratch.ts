// A pool of Float32Array buffers for the engine's per-pass temporaries (a block's activations and
// gradients, the residual stream). Every `new Float32Array` of megabytes counts as external
// memory, and V8 answers external growth with a full mark-compact: on a small model that was
// hundreds of collections a step, their marking busy on the core the kernels' second thread wants.
// Buffers come back with give() once their pass is done and are handed out again, zeroed.
//
// Only buffers take() made are ever pooled, and each at most once, so giving back a weight view,
// a user's array or the same buffer twice cannot hand one buffer to two owners.

import { totalmem } from "node:os";
import { envCount, hugePages } from "../../native/binding.js";

// Below this V8 keeps a typed array's contents on its own heap; above it every array is an external
// allocation, and decode steps of a small model make dozens of a few KiB each: pooled too.
const MIN_FLOATS = 1 << 4;
/**
 * Floats kept idle between passes: an eighth of the machine's memory, from 256 MiB to 2 GiB, or
 * MASO_SCRATCH_POOL_MB. A pass's working set must fit, or each pass drops buffers and allocates
 * them again: the kernel zeroes every fresh page, and V8 answers the external growth with full
 * collections. At 1 GiB the update of a LoRA RL step at the 0.5B shape (1 GiB activation budget)
 * took 52 s, at 2 GiB 37 s, with a lower peak RSS.
 */
let maxPooledFloats: number | undefined;
function poolLimit(): number {
  // read once: give() runs dozens of times per decode step, and process.env is slow to read
  if (maxPooledFloats === undefined) {
    const mb = envCount("MASO_SCRATCH_POOL_MB");
    maxPooledFloats = mb !== undefined ? mb * 2 ** 18 : Math.min(1 << 29, Math.max(1 << 26, Math.floor(totalmem() / 32)));
  }
  return maxPooledFloats;
}

/** A buffer take() made: its full-capacity view, and whether it waits in the pool. */
interface Pooled {
  readonly whole: Float32Array;
  idle: boolean;
}
// One entry per buffer for its lifetime, flipped between idle and taken: a WeakSet of idle buffers
// added to and deleted from on every take and give cost 4 % of a small model's decode step.
const made = new WeakMap<ArrayBufferLike, Pooled>();
const free = new Map<number, Pooled[]>(); // capacity -> idle buffers
let idleFloats = 0;

/** Capacity of the bucket holding n floats: n rounded up to an eighth of its power of two. */
function capacityFor(n: number): number {
  const step = 2 ** Math.max(0, Math.floor(Math.log2(n)) - 3);
  return Math.ceil(n / step) * step;
}

/**
 * The smallest idle buffer of at least n floats and at most a quarter more: batch sizes vary from
 * one pass to the next, so exact buckets would rarely meet again, and the bound keeps the waste of
 * a reused buffer small. The candidates are the few bucket capacities in [n, 1.25 n].
 */
function idleBufferFor(n: number): Pooled | undefined {
  for (let cap = capacityFor(n); cap <= n * 1.25; cap = capacityFor(cap + 1)) {
    const list = free.get(cap);
    if (list && list.length > 0) return list.pop();
  }
  return undefined;
}

/** A zeroed Float32Array of n floats, pooled unless tiny. */
export function take(n: number): Float32Array {
  const reused = reuse(n);
  if (!reused) return fresh(n);
  reused.fill(0);
  return reused;
}

/**
 * A Float32Array of n floats holding whatever its last owner left: only for a kernel's output that
 * the kernel writes in full before anything reads it. Zeroing a training pass's activations cost a
 * tenth of its time, on one thread while the kernels' other threads waited.
 */
export function takeUncleared(n: number): Float32Array {
  return reuse(n) ?? fresh(n);
}

function fresh(n: number): Float32Array {
  if (n < MIN_FLOATS) return new Float32Array(n);
  const whole = hugePages(new Float32Array(capacityFor(n)));
  made.set(whole.buffer, { whole, idle: false });
  return whole.subarray(0, n);
}

/** An idle pooled buffer's first n floats, taken out of the pool; undefined when none fits. */
function reuse(n: number): Float32Array | undefined {
  if (n < MIN_FLOATS) return undefined;
  const entry = idleBufferFor(n);
  if (!entry) return undefined;
  entry.idle = false;
  idleFloats -= entry.whole.length;
  return entry.whole.subarray(0, n);
}

/** Returns arrays take() handed out; anything else (and a second give) is ignored. */
export function give(...arrays: (Float32Array | null | undefined)[]): void {
  for (const a of arrays) {
    const entry = a && made.get(a.buffer);
    if (!entry || entry.idle) continue;
    const cap = entry.whole.length;
    if (idleFloats + cap > poolLimit()) continue;
    entry.idle = true;
    idleFloats += cap;
    const list = free.get(cap);
    if (list) list.push(entry);
    else free.set(cap, [entry]);
  }
}

/**
 * Fills every idle buffer with `value` (for tests: after filling with NaN, an output a kernel does
 * not write in full shows up in results that should equal a run on fresh buffers).
 */
export function fillPooled(value: number): void {
  for (const list of free.values()) for (const e of list) e.whole.fill(value);
}

/** Floats waiting in the pool (for tests and memory reports). */
export function pooledFloats(): number {
  return idleFloats;
}
