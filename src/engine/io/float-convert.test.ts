// F16/BF16 conversions: hand-picked edge cases, then every F16 pattern and a large random sample of
// float32 patterns checked bit for bit against numpy (F16) and a float64 nearest-even reference (BF16).
import { describe, expect, it } from "vitest";
import {
  bf16BitsToF32Bits,
  decodeBf16,
  decodeF16,
  encodeBf16,
  encodeF16,
  f16BitsToF32Bits,
  f32Bits,
  f32BitsToBf16Bits,
  f32BitsToF16Bits,
  f32FromBits,
} from "./float-convert.js";
import { numpySkipReason, runPython } from "./test-numpy.js";

const toF16 = (x: number) => f32BitsToF16Bits(f32Bits(x));
const toBf16 = (x: number) => f32BitsToBf16Bits(f32Bits(x));
const fromF16 = (h: number) => f32FromBits(f16BitsToF32Bits(h));

describe("f16 edge cases", () => {
  it("rounds to nearest even, overflows to inf, handles subnormals and signed zero", () => {
    expect(toF16(1)).toBe(0x3c00);
    expect(toF16(65504)).toBe(0x7bff);
    expect(toF16(65519)).toBe(0x7bff);
    expect(toF16(65520)).toBe(0x7c00); // halfway to 65536 rounds to even = inf
    expect(toF16(1 + 2 ** -11)).toBe(0x3c00); // tie, even stays
    expect(toF16(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie, odd rounds up
    expect(toF16(2 ** -24)).toBe(0x0001);
    expect(toF16(2 ** -25)).toBe(0x0000); // tie with zero
    expect(toF16(1.5 * 2 ** -25)).toBe(0x0001);
    expect(toF16(3 * 2 ** -25)).toBe(0x0002); // tie between 1 and 2 subnormal units
    expect(toF16(2 ** -14 - 2 ** -25)).toBe(0x0400); // rounds up into the smallest normal
    expect(toF16(-0)).toBe(0x8000);
    expect(toF16(-Infinity)).toBe(0xfc00);
    expect(toF16(Number.NaN) & 0x7c00).toBe(0x7c00);
    expect(toF16(Number.NaN) & 0x3ff).not.toBe(0);
  });
  it("decodes subnormals, inf and nan", () => {
    expect(fromF16(0x0001)).toBe(2 ** -24);
    expect(fromF16(0x03ff)).toBe(1023 * 2 ** -24);
    expect(fromF16(0x8000)).toBe(-0);
    expect(fromF16(0x7c00)).toBe(Infinity);
    expect(fromF16(0xfc00)).toBe(-Infinity);
    expect(fromF16(0x7e00)).toBeNaN();
    expect(fromF16(0x3555)).toBeCloseTo(0.333251953125, 12);
  });
  it("array helpers agree with the scalar functions", () => {
    const x = new Float32Array([0, -1.5, 2.71, 1e-6, 7e4, Number.NaN, -Infinity]);
    const h = new Uint16Array(x.length);
    encodeF16(x, h);
    expect([...h]).toEqual([...x].map(toF16));
    const back = new Float32Array(x.length);
    decodeF16(h, back);
    expect([...back].map(f32Bits)).toEqual([...h].map(f16BitsToF32Bits));
  });
});

describe("bf16 edge cases", () => {
  it("rounds to nearest even and keeps nan", () => {
    expect(toBf16(1)).toBe(0x3f80);
    expect(toBf16(1 + 2 ** -8)).toBe(0x3f80); // tie, even stays
    expect(toBf16(1 + 3 * 2 ** -8)).toBe(0x3f82); // tie, odd rounds up
    expect(toBf16(1 + 2 ** -8 + 2 ** -20)).toBe(0x3f81);
    expect(toBf16(f32FromBits(0x7f7fffff))).toBe(0x7f80); // max float rounds to inf
    expect(toBf16(Infinity)).toBe(0x7f80);
    expect(toBf16(-0)).toBe(0x8000);
    expect(f32BitsToBf16Bits(0x7f800001) & 0x7f).not.toBe(0);
    expect(f32FromBits(bf16BitsToF32Bits(0x3f80))).toBe(1);
  });
  it("array helpers agree with the scalar functions", () => {
    const x = new Float32Array([0, -1.5, 2.71, 1e-6, 3e38, Number.NaN]);
    const h = new Uint16Array(x.length);
    encodeBf16(x, h);
    expect([...h]).toEqual([...x].map(toBf16));
    const back = new Float32Array(x.length);
    decodeBf16(h, back);
    expect([...back].map(f32Bits)).toEqual([...h].map(bf16BitsToF32Bits));
  });
});

/** Deterministic float32 bit patterns: uniform bits, the f16 range, exact ties and specials. */
function samplePatterns(n: number): Uint32Array {
  let s = 0x9e3779b9;
  const rnd = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const r = rnd();
    const sign = (rnd() & 1) << 31;
    switch (i % 5) {
      case 0:
        out[i] = r;
        break;
      case 1: // exponents around the f16 range: subnormals, normals, overflow
        out[i] = (sign | ((95 + (r % 60)) << 23) | (rnd() & 0x7fffff)) >>> 0;
        break;
      case 2: // exact f16 ties (low 13 bits = 0x1000) and their neighbours
        out[i] = (sign | ((100 + (r % 45)) << 23) | ((rnd() & 0x7fe000) + 0x1000 + ((r >>> 8) % 3) - 1)) >>> 0;
        break;
      case 3: // exact bf16 ties (low 16 bits = 0x8000) and neighbours
        out[i] = (((rnd() & 0xffff0000) | 0x8000) + ((r >>> 8) % 3) - 1) >>> 0;
        break;
      default:
        out[i] = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7f7fffff, 0x00000001, 0x807fffff, 0x477fe000, 0x477ff000][r % 9];
    }
  }
  return out;
}

const isNanBits32 = (b: number) => (b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0;
const isNanBits16 = (b: number) => (b & 0x7c00) === 0x7c00 && (b & 0x3ff) !== 0;

describe.skipIf(numpySkipReason !== null)(`numpy reference${numpySkipReason ? ` (skipped: ${numpySkipReason})` : ""}`, () => {
  it("decodes every F16 bit pattern like numpy.float16", () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const out = runPython(
      "import sys, numpy as np\nh = np.frombuffer(sys.stdin.buffer.read(), dtype='<u2').view(np.float16)\nsys.stdout.buffer.write(h.astype(np.float32).view('<u4').tobytes())",
      new Uint8Array(all.buffer),
    );
    const ref = new Uint32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength));
    let checked = 0;
    for (let h = 0; h < 65536; h++) {
      const mine = f16BitsToF32Bits(h);
      if (isNanBits16(h)) {
        expect(isNanBits32(mine) && isNanBits32(ref[h]) && mine >>> 31 === ref[h] >>> 31).toBe(true);
      } else {
        if (mine !== ref[h]) expect({ h, mine, ref: ref[h] }).toEqual({ h, mine: ref[h], ref: ref[h] });
        checked++;
      }
    }
    expect(checked).toBe(65536 - 2 * 1023);
  });

  it("encodes float32 to F16 like numpy (round to nearest even)", () => {
    const bits = samplePatterns(200_000);
    const out = runPython(
      "import sys, numpy as np\nf = np.frombuffer(sys.stdin.buffer.read(), dtype='<u4').view(np.float32)\nwith np.errstate(all='ignore'):\n    sys.stdout.buffer.write(f.astype(np.float16).view('<u2').tobytes())",
      new Uint8Array(bits.buffer),
    );
    const ref = new Uint16Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength));
    const f32 = new Float32Array(bits.buffer);
    const mine = new Uint16Array(bits.length);
    encodeF16(f32, mine);
    let mismatches = 0;
    for (let i = 0; i < bits.length; i++) {
      const ok = isNanBits32(bits[i]) ? isNanBits16(mine[i]) && isNanBits16(ref[i]) : mine[i] === ref[i];
      if (!ok && mismatches++ < 5)
        console.error(`f16 mismatch for 0x${bits[i].toString(16)}: 0x${mine[i].toString(16)} vs numpy 0x${ref[i].toString(16)}`);
    }
    expect(mismatches).toBe(0);
  });

  it("encodes float32 to BF16 like a float64 nearest-even reference, and decodes like numpy", () => {
    const bits = samplePatterns(200_000);
    // Independent reference: pick the nearer of the two bf16 neighbours by float64 distance, ties to even.
    const script = `import sys, numpy as np
u = np.frombuffer(sys.stdin.buffer.read(), dtype='<u4').astype(np.uint64)
def val(b):
    sign = np.where((b >> 31) & 1, -1.0, 1.0)
    e = ((b >> 23) & 0xff).astype(np.int64)
    m = (b & 0x7fffff).astype(np.float64)
    return sign * np.where(e == 0, np.ldexp(m, -149), np.ldexp(m + 2.0**23, (e - 150).astype(np.int32)))
lo = u & 0xffff0000
hi = lo + 0x10000
x, vlo, vhi = val(u), val(lo), val(hi)
dlo, dhi = np.abs(x - vlo), np.abs(vhi - x)
pick_hi = (dhi < dlo) | ((dhi == dlo) & (((lo >> 16) & 1) == 1))
r = np.where(pick_hi, hi, lo) >> 16
nan = (((u >> 23) & 0xff) == 0xff) & ((u & 0x7fffff) != 0)
r = np.where(nan, 0xffff_ffff, r)
sys.stdout.buffer.write(r.astype('<u4').tobytes())
back = (r.astype(np.uint32) & 0xffff) << 16
sys.stdout.buffer.write(back.astype('<u4').view(np.float32).view('<u4').tobytes())`;
    const out = runPython(script, new Uint8Array(bits.buffer));
    const all = new Uint32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength));
    const ref = all.subarray(0, bits.length);
    const refBack = all.subarray(bits.length);
    const mine = new Uint16Array(bits.length);
    encodeBf16(new Float32Array(bits.buffer), mine);
    const back = new Float32Array(bits.length);
    decodeBf16(mine, back);
    const backBits = new Uint32Array(back.buffer);
    let mismatches = 0;
    for (let i = 0; i < bits.length; i++) {
      const nan = ref[i] === 0xffffffff;
      const ok = nan ? isNanBits32(bf16BitsToF32Bits(mine[i])) : mine[i] === ref[i] && backBits[i] === refBack[i];
      if (!ok && mismatches++ < 5)
        console.error(`bf16 mismatch for 0x${bits[i].toString(16)}: 0x${mine[i].toString(16)} vs 0x${ref[i].toString(16)}`);
    }
    expect(mismatches).toBe(0);
  });
});
