// Seeded random initialisation. A run must be reproducible from its seed, so nothing here touches
// Math.random; the generator state is a plain number that checkpoints can save.

/** A seeded generator returning uniform floats in [0, 1). */
export interface Rng {
  next(): number;
  /** internal state, for checkpoints */
  state(): number;
}

/** mulberry32: tiny, fast, good enough for weight init and sampling noise. */
export function createRng(seed: number): Rng {
  let s = seed >>> 0;
  return {
    next() {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    state: () => s,
  };
}

/** Fills with N(0, std^2) by Box-Muller. */
export function fillNormal(x: Float32Array, rng: Rng, std: number): void {
  for (let i = 0; i < x.length; i += 2) {
    const u = Math.max(rng.next(), 1e-12);
    const v = rng.next();
    const r = Math.sqrt(-2 * Math.log(u)) * std;
    x[i] = r * Math.cos(2 * Math.PI * v);
    if (i + 1 < x.length) x[i + 1] = r * Math.sin(2 * Math.PI * v);
  }
}
