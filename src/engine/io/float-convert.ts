// Bit-exact conversions between float32 and the 16-bit float formats found in checkpoints:
// IEEE binary16 (F16) and bfloat16 (BF16), both rounding to nearest, ties to even.
// Pure arithmetic on typed arrays: no I/O, no allocation beyond one lazily built lookup table.

const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** float32 bit pattern (as an unsigned 32-bit integer) of a JS number, after rounding to float32. */
export function f32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0];
}

/** The float32 whose bit pattern is `bits`. */
export function f32FromBits(bits: number): number {
  scratchU32[0] = bits;
  return scratchF32[0];
}

/**
 * float32 bits of an F16 value. Exact for every input: subnormals are renormalised,
 * infinities keep their sign, NaNs keep sign and payload (shifted into the top mantissa bits).
 */
export function f16BitsToF32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exp = (h >>> 10) & 0x1f;
  let mant = h & 0x3ff;
  if (exp === 0x1f) return (sign | 0x7f800000 | (mant << 13)) >>> 0;
  if (exp !== 0) return (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0;
  if (mant === 0) return sign >>> 0;
  // subnormal m * 2^-24: shift the leading one into the implicit-bit position
  let e = 113;
  while ((mant & 0x400) === 0) {
    mant <<= 1;
    e--;
  }
  return (sign | (e << 23) | ((mant & 0x3ff) << 13)) >>> 0;
}

/** F16 bits of a float32 bit pattern, rounding to nearest even; overflow gives ±inf, NaN stays NaN. */
export function f32BitsToF16Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) {
    if (mant === 0) return sign | 0x7c00;
    const payload = mant >>> 13;
    return sign | 0x7c00 | (payload === 0 ? 1 : payload);
  }
  const e = exp - 112; // rebias 127 -> 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // result is an F16 subnormal (or zero): value = full * 2^(e - 14 - 24) in units of 2^-24
    if (e < -10) return sign; // below half the smallest subnormal
    const full = mant | 0x800000;
    const shift = 14 - e;
    let h = full >>> shift;
    const rem = full & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1) === 1)) h += 1;
    return sign | h; // a carry into 0x400 is the smallest normal, encoded correctly
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h += 1; // a carry may reach 0x7c00 = inf
  return sign | h;
}

/** BF16 bits of a float32 bit pattern: the upper 16 bits, rounded to nearest even; NaN stays NaN. */
export function f32BitsToBf16Bits(bits: number): number {
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  const rounded = bits + 0x7fff + ((bits >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** float32 bits of a BF16 value (exact: bf16 is the upper half of a float32). */
export const bf16BitsToF32Bits = (h: number): number => (h << 16) >>> 0;

let f16Table: Uint32Array | null = null;

function f16ToF32Table(): Uint32Array {
  if (!f16Table) {
    f16Table = new Uint32Array(65536);
    for (let h = 0; h < 65536; h++) f16Table[h] = f16BitsToF32Bits(h);
  }
  return f16Table;
}

const bitsOf = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer, a.byteOffset, a.length);

/** Decode F16 values into `out` (same length). */
export function decodeF16(src: Uint16Array, out: Float32Array): void {
  const table = f16ToF32Table();
  const o = bitsOf(out);
  for (let i = 0; i < src.length; i++) o[i] = table[src[i]];
}

/** Decode BF16 values into `out` (same length). */
export function decodeBf16(src: Uint16Array, out: Float32Array): void {
  const o = bitsOf(out);
  for (let i = 0; i < src.length; i++) o[i] = src[i] << 16;
}

/** Encode float32 values as F16 into `out` (same length), rounding to nearest even. */
export function encodeF16(src: Float32Array, out: Uint16Array): void {
  const s = bitsOf(src);
  for (let i = 0; i < s.length; i++) out[i] = f32BitsToF16Bits(s[i]);
}

/** Encode float32 values as BF16 into `out` (same length), rounding to nearest even. */
export function encodeBf16(src: Float32Array, out: Uint16Array): void {
  const s = bitsOf(src);
  for (let i = 0; i < s.length; i++) out[i] = f32BitsToBf16Bits(s[i]);
}
