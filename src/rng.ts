// Seeded pseudo-random streams. A run must reproduce from its seed, so nothing here calls
// Math.random or reads the clock. Two generators, kept bit-for-bit as they always were:
// - createRng(seed): mulberry32 from a number; its whole state is one 32-bit number, so
//   checkpoints save `state()` and resume with `createRng(state)`. Weight init, sampling noise,
//   shuffles in training.
// - createKeyedRng(key): sfc32 seeded by hashing a string; `fork(label)` derives child streams
//   from the key alone, so task generation never depends on how many draws came before.
// Not for anything secret.

/** Draws from a seeded stream. */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher–Yates); `items` is left as it is. */
  shuffle<T>(items: readonly T[]): T[];
}

/** A number-seeded stream whose state is one number: `createRng(rng.state())` continues it exactly. */
export interface SeededRng extends Rng {
  state(): number;
}

/** A string-keyed stream. */
export interface KeyedRng extends Rng {
  /** A child stream whose sequence depends only on this stream's key and `label`. */
  fork(label: string): KeyedRng;
}

/** int, pick and shuffle over a `next` source; each shuffle step is int(0, i), i.e. floor(next() * (i + 1)). */
function draws(next: () => number): Rng {
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)],
    shuffle: (items) => {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
  };
}

/**
 * A mulberry32 stream from a number seed (taken as uint32); a saved `state()` is also a seed.
 * @example
 * const rng = createRng(42); rng.next(); // 0.6011…, on every run
 */
export function createRng(seed: number): SeededRng {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { ...draws(next), state: () => s };
}

/** 32-bit string hash (cyrb53-style mixing, low 32 bits) used to seed keyed streams. */
export function hashSeed(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 ^ h2) >>> 0;
}

/**
 * An sfc32 stream seeded by hashing `key`.
 * @example
 * const rng = createKeyedRng("world:42"); rng.int(1, 6); // same value on every run
 */
export function createKeyedRng(key: string): KeyedRng {
  let a = hashSeed(`a:${key}`);
  let b = hashSeed(`b:${key}`);
  let c = hashSeed(`c:${key}`);
  let d = 1;
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return { ...draws(next), fork: (label) => createKeyedRng(`${key}/${label}`) };
}
