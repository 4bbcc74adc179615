// A seeded PRNG (mulberry32) for reproducible fuzzing and test delays. Not for anything secret.
// Tests only use it to make random choices repeatable.

/**
 * Returns a function giving uniform numbers in [0, 1), the same sequence for the same seed.
 *
 * @example
 * const rand = mulberry32(42); rand(); // 0.6011…
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
