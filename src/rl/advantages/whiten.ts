// Whitening of per-token advantages within a scope (per role, role+turn, model, or the whole batch).
// Token-weighted mean and population variance over response tokens; it never mixes scopes.

import type { TokenLayout } from "../types.js";
import type { NormalizeScope, SampleMeta } from "./types.js";

/** The scope key of a sample; samples with equal keys are whitened together. */
export function scopeKey(m: SampleMeta, scope: Exclude<NormalizeScope, "none">): string {
  switch (scope) {
    case "role":
      return JSON.stringify(["role", m.role]);
    case "role-turn":
      return JSON.stringify(["role-turn", m.role, m.turn]);
    case "model":
      return JSON.stringify(["model", m.model]);
    case "global":
      return "global";
  }
}

/** The per-sample affine map of a whitening: whitened = (x − shift[s]) · scale[s]. */
export interface Whitening {
  values: Float32Array;
  shift: Float64Array;
  scale: Float64Array;
  /** Distinct scopes seen (0 for `none`). */
  scopes: number;
}

/**
 * Returns `(x − mean) / sqrt(var + eps)` per scope over response tokens (token-weighted, population
 * variance); masked-out tokens stay 0. `shift`/`scale` let callers apply the same map to per-sample values.
 *
 * @example
 * whitenByScope([1, 3], { offsets: [0, 1, 2], mask: [1, 1] }, samples, "global").values; // ≈ [-1, 1]
 */
export function whitenByScope(
  x: ArrayLike<number>,
  layout: TokenLayout,
  samples: readonly SampleMeta[],
  scope: NormalizeScope,
  eps = 1e-8,
): Whitening {
  const S = samples.length;
  const shift = new Float64Array(S);
  const scale = new Float64Array(S).fill(1);
  if (scope === "none") {
    const values = new Float32Array(x.length);
    for (let t = 0; t < x.length; t++) if (layout.mask[t] === 1) values[t] = x[t];
    return { values, shift, scale, scopes: 0 };
  }
  const keys = samples.map((m) => scopeKey(m, scope));
  const stats = new Map<string, { n: number; sum: number; sq: number }>();
  const statOf = (s: number) => {
    let st = stats.get(keys[s]);
    if (!st) stats.set(keys[s], (st = { n: 0, sum: 0, sq: 0 }));
    return st;
  };
  for (let s = 0; s < S; s++) {
    const st = statOf(s);
    for (let t = layout.offsets[s]; t < layout.offsets[s + 1]; t++) {
      if (layout.mask[t] === 0) continue;
      st.n += 1;
      st.sum += x[t];
    }
  }
  const meanOf = (s: number) => {
    const st = statOf(s);
    return st.n > 0 ? st.sum / st.n : 0;
  };
  for (let s = 0; s < S; s++) {
    const st = statOf(s);
    const mean = meanOf(s);
    for (let t = layout.offsets[s]; t < layout.offsets[s + 1]; t++) if (layout.mask[t] !== 0) st.sq += (x[t] - mean) ** 2;
  }
  const values = new Float32Array(x.length);
  for (let s = 0; s < S; s++) {
    const st = statOf(s);
    shift[s] = meanOf(s);
    scale[s] = st.n > 0 ? 1 / Math.sqrt(st.sq / st.n + eps) : 1;
    for (let t = layout.offsets[s]; t < layout.offsets[s + 1]; t++) if (layout.mask[t] !== 0) values[t] = (x[t] - shift[s]) * scale[s];
  }
  return { values, shift, scale, scopes: stats.size };
}
