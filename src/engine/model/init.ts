// Seeded random initialisation. A run must be reproducible from its seed, so draws come only from
// a seeded stream (src/rng.ts), never Math.random.
import type { Rng } from "../../rng.js";

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
