// Central finite differences of a scalar function, for checking the analytic gradients of losses
// (used by the tests, and by anyone adding a loss). Float64 throughout; it never touches loss code.

/**
 * ∂f/∂x_i ≈ (f(x + h·e_i) − f(x − h·e_i)) / 2h for every i.
 *
 * @example
 * centralDifferences((x) => x[0] * x[0], [3]); // ≈ [6]
 */
export function centralDifferences(f: (x: number[]) => number, x: readonly number[], h = 1e-6): Float64Array {
  const out = new Float64Array(x.length);
  const y = [...x];
  for (let i = 0; i < x.length; i++) {
    y[i] = x[i] + h;
    const up = f(y);
    y[i] = x[i] - h;
    const down = f(y);
    y[i] = x[i];
    out[i] = (up - down) / (2 * h);
  }
  return out;
}

/** Largest absolute difference between two arrays of equal length (Infinity when lengths differ). */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
