// Lays per-sequence arrays end to end, the packed layout every rl/ function reads (see types.ts).

/**
 * The parts one after another in one Float32Array.
 *
 * @example
 * concat([Float32Array.of(1, 2), [3]]); // Float32Array [1, 2, 3]
 */
export function concat(parts: readonly ArrayLike<number>[]): Float32Array {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
