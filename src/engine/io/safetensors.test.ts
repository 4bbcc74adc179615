// safetensors: a hand-built file with a known byte layout, exact writer output, round trips in
// F32/F16/BF16 through the file-descriptor reader, a pure-Python reader/writer as an independent
// reference, and corrupt files that must each fail with a specific MasoError code.
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import { decodeBf16, decodeF16, encodeBf16, encodeF16 } from "./float-convert.js";
import { encodeSafetensors, openSafetensors, parseSafetensors, safetensorsFileSize, writeSafetensors } from "./safetensors.js";
import { numpySkipReason, runPython } from "./test-numpy.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "maso-st-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Assemble a safetensors file from a header string and raw data bytes, as the spec describes. */
function build(headerJson: string, data: Uint8Array, headerLen?: bigint): Uint8Array {
  const json = new TextEncoder().encode(headerJson);
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, headerLen ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function handBuilt(): Uint8Array {
  const data = new Uint8Array(24);
  const dv = new DataView(data.buffer);
  dv.setFloat32(0, 1.5, true); // a: F32 [2]
  dv.setFloat32(4, -2.25, true);
  dv.setUint16(8, 0x3f80, true); // b: BF16 [1, 2] = 1, -2
  dv.setUint16(10, 0xc000, true);
  dv.setUint16(12, 0x3c00, true); // c: F16 [2] = 1, 2^-24
  dv.setUint16(14, 0x0001, true);
  dv.setBigInt64(16, -7n, true); // i: I64 [1]
  // tensors listed out of offset order, metadata last: both are legal
  const header =
    '{"c":{"dtype":"F16","shape":[2],"data_offsets":[12,16]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' +
    '"b":{"dtype":"BF16","shape":[1,2],"data_offsets":[8,12]},"i":{"dtype":"I64","shape":[1],"data_offsets":[16,24]},' +
    '"__metadata__":{"format":"pt"}}';
  return build(header, data);
}

/** Index of the first element whose bits differ, or -1 (toEqual is far too slow on millions of floats). */
function firstDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    expect(e).toBeInstanceOf(MasoError);
    return (e as MasoError).code;
  }
  throw new Error("expected a MasoError");
}

describe("reading", () => {
  it("decodes a hand-built buffer with a known layout", () => {
    const { header, tensors } = parseSafetensors(handBuilt());
    expect(header.metadata).toEqual({ format: "pt" });
    expect(header.tensors.map((t) => t.name)).toEqual(["c", "a", "b", "i"]);
    expect([...(tensors.get("a")!.data as Float32Array)]).toEqual([1.5, -2.25]);
    expect(tensors.get("b")!.shape).toEqual([1, 2]);
    expect([...(tensors.get("b")!.data as Float32Array)]).toEqual([1, -2]);
    expect([...(tensors.get("c")!.data as Float32Array)]).toEqual([1, 2 ** -24]);
    expect([...(tensors.get("i")!.data as BigInt64Array)]).toEqual([-7n]);
  });

  it("reads the same file tensor by tensor from disk", async () => {
    const path = join(dir, "hand.safetensors");
    await writeFile(path, handBuilt());
    const st = await openSafetensors(path);
    try {
      expect([...(await st.readF32("b"))]).toEqual([1, -2]);
      expect([...(await st.readF32("c"))]).toEqual([1, 2 ** -24]);
      expect([...(await st.readInt("i"))]).toEqual([-7n]);
      expect(await codeOf(st.readF32("i"))).toBe("SAFETENSORS_DTYPE");
      expect(await codeOf(st.readF32("nope"))).toBe("SAFETENSORS_MISSING");
      expect(await codeOf(st.readF32Into("a", new Float32Array(3)))).toBe("SAFETENSORS_SHAPE");
    } finally {
      await st.close();
    }
  });
});

describe("writing", () => {
  it("produces exactly the documented bytes: u64 length, space-padded JSON, packed data", () => {
    const bytes = encodeSafetensors(
      [
        { name: "w", shape: [2], data: new Float32Array([1, -2]) },
        { name: "b", shape: [1], data: new Float32Array([0.5]) },
      ],
      { metadata: { format: "pt" } },
    );
    const json =
      '{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}';
    const padded = json.padEnd(Math.ceil(json.length / 8) * 8, " ");
    const data = new Uint8Array(new Float32Array([1, -2, 0.5]).buffer);
    expect(Buffer.from(bytes).equals(Buffer.from(build(padded, data)))).toBe(true);
    expect((8 + padded.length) % 8).toBe(0);
    expect(
      safetensorsFileSize(
        [
          { name: "w", shape: [2], data: new Float32Array(2) },
          { name: "b", shape: [1], data: new Float32Array(1) },
        ],
        { metadata: { format: "pt" } },
      ),
    ).toBe(bytes.length);
  });

  it("round-trips F32 exactly and F16/BF16 to their precision through files", async () => {
    const n = 1000;
    const x = new Float32Array(n).map((_, i) => Math.sin(i * 0.37) * 10 ** ((i % 9) - 4));
    const zero = new Float32Array(0);
    for (const dtype of ["F32", "F16", "BF16"] as const) {
      const path = join(dir, `rt-${dtype}.safetensors`);
      await writeSafetensors(
        path,
        [
          { name: "x", shape: [10, 100], data: x },
          { name: "empty", shape: [0, 3], data: zero },
        ],
        { dtype },
      );
      const st = await openSafetensors(path);
      const y = await st.readF32("x");
      expect(st.entry("x").dtype).toBe(dtype);
      expect(st.entry("empty").shape).toEqual([0, 3]);
      expect((await st.readF32("empty")).length).toBe(0);
      await st.close();
      if (dtype === "F32") {
        expect(y).toEqual(x);
        continue;
      }
      // exact agreement with the converters, and relative error within half an ulp where normal
      const h = new Uint16Array(n);
      const ref = new Float32Array(n);
      if (dtype === "F16") {
        encodeF16(x, h);
        decodeF16(h, ref);
      } else {
        encodeBf16(x, h);
        decodeBf16(h, ref);
      }
      expect(y).toEqual(ref);
      const eps = dtype === "F16" ? 2 ** -11 : 2 ** -8;
      for (let i = 0; i < n; i++) {
        if (Math.abs(x[i]) > (dtype === "F16" ? 6.2e-5 : 1e-37)) expect(Math.abs(y[i] - x[i])).toBeLessThanOrEqual(Math.abs(x[i]) * eps);
        else expect(Math.abs(y[i] - x[i])).toBeLessThanOrEqual(2 ** -25);
      }
    }
    expect((await readdir(dir)).filter((f) => f.includes(".tmp-"))).toEqual([]);
  });

  it("reads tensors larger than one conversion chunk", async () => {
    const n = (1 << 22) + 12345;
    const x = new Float32Array(n).map((_, i) => (i % 256) - 128);
    const path = join(dir, "big.safetensors");
    await writeSafetensors(path, [{ name: "big", shape: [n], data: x }], { dtype: "BF16" });
    const st = await openSafetensors(path);
    const y = await st.readF32("big");
    await st.close();
    expect(firstDifference(y, x)).toBe(-1); // integers up to 256 are exact in bf16
  });

  it("rejects inconsistent input without leaving a file behind", async () => {
    const path = join(dir, "bad-write.safetensors");
    expect(await codeOf(writeSafetensors(path, [{ name: "w", shape: [3], data: new Float32Array(2) }]))).toBe("SAFETENSORS_WRITE");
    expect(
      await codeOf(
        writeSafetensors(path, [
          { name: "w", shape: [1], data: new Float32Array(1) },
          { name: "w", shape: [1], data: new Float32Array(1) },
        ]),
      ),
    ).toBe("SAFETENSORS_WRITE");
    expect((await readdir(dir)).filter((f) => f.startsWith("bad-write") || f.includes(".tmp-"))).toEqual([]);
  });
});

describe("corrupt files", () => {
  const f32 = (name: string, begin: number, end: number, shape = "[2]") =>
    `"${name}":{"dtype":"F32","shape":${shape},"data_offsets":[${begin},${end}]}`;

  it("truncated data, short files and bad header lengths", async () => {
    const path = join(dir, "trunc.safetensors");
    await writeSafetensors(path, [{ name: "w", shape: [4, 4], data: new Float32Array(16) }]);
    await truncate(path, (await readFile(path)).length - 4);
    const err = await openSafetensors(path).catch((e) => e);
    expect(err).toBeInstanceOf(MasoError);
    expect(err.code).toBe("SAFETENSORS_OFFSETS");
    expect(err.message).toContain(path);
    expect(err.message).toContain("tensor w");
    await writeFile(path, new Uint8Array(5));
    expect(await codeOf(openSafetensors(path))).toBe("SAFETENSORS_TRUNCATED");
    await writeFile(path, build(`{${f32("w", 0, 8)}}`, new Uint8Array(8), 1n << 40n));
    expect(await codeOf(openSafetensors(path))).toBe("SAFETENSORS_HEADER_LENGTH");
    await writeFile(path, build(`{${f32("w", 0, 8)}}`, new Uint8Array(8), 10_000n));
    expect(await codeOf(openSafetensors(path))).toBe("SAFETENSORS_HEADER_LENGTH");
    expect(await codeOf(() => parseSafetensors(new Uint8Array(3)))).toBe("SAFETENSORS_TRUNCATED");
  });

  it("bad JSON, bad entries, overlapping offsets, size mismatches and unknown dtypes", async () => {
    const data = new Uint8Array(16);
    const cases: [string, string][] = [
      ['{"w": {"dtype":"F32",', "SAFETENSORS_HEADER_JSON"],
      ["[1,2]", "SAFETENSORS_HEADER_JSON"],
      ['{"w": 3}', "SAFETENSORS_HEADER_JSON"],
      [`{"__metadata__":{"a":1},${f32("w", 0, 8)}}`, "SAFETENSORS_HEADER_JSON"],
      [`{${f32("w", 0, 8, "[2.5]")}}`, "SAFETENSORS_HEADER_JSON"],
      [`{${f32("a", 0, 8)},${f32("b", 4, 12)}}`, "SAFETENSORS_OFFSETS"],
      [`{${f32("a", 8, 4)}}`, "SAFETENSORS_OFFSETS"],
      [`{${f32("a", 0, 12)}}`, "SAFETENSORS_SIZE_MISMATCH"],
      ['{"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}', "SAFETENSORS_DTYPE"],
    ];
    for (const [header, code] of cases) {
      const path = join(dir, "corrupt.safetensors");
      await writeFile(path, build(header, data));
      const err = await openSafetensors(path).catch((e) => e);
      expect(err, header).toBeInstanceOf(MasoError);
      expect(err.code, header).toBe(code);
      expect(err.message).toContain(path);
      expect(() => parseSafetensors(build(header, data), "mem")).toThrow(MasoError);
    }
    const err = await codeOf(() => parseSafetensors(build('{"layer.w":{"dtype":"Q4","shape":[2],"data_offsets":[0,1]}}', data), "x.st"));
    expect(err).toBe("SAFETENSORS_DTYPE");
    try {
      parseSafetensors(build('{"layer.w":{"dtype":"Q4","shape":[2],"data_offsets":[0,1]}}', data), "x.st");
    } catch (e) {
      expect((e as Error).message).toMatch(/x\.st: tensor layer\.w has unknown dtype "Q4"/);
    }
  });

  it("a missing file is a MasoError, not an ENOENT crash", async () => {
    expect(await codeOf(openSafetensors(join(dir, "absent.safetensors")))).toBe("SAFETENSORS_OPEN");
  });
});

describe.skipIf(numpySkipReason !== null)(
  `independent Python reader/writer${numpySkipReason ? ` (skipped: ${numpySkipReason})` : ""}`,
  () => {
    it("a pure-Python reader decodes what we write, in every dtype", async () => {
      const x = new Float32Array(64).map((_, i) => (i - 31.7) / 7);
      for (const dtype of ["F32", "F16", "BF16"] as const) {
        const path = join(dir, `py-${dtype}.safetensors`);
        await writeSafetensors(path, [{ name: "x", shape: [8, 8], data: x }], { dtype, metadata: { format: "pt" } });
        const script = `import sys, json, struct, numpy as np
b = open(sys.argv[1], 'rb').read()
n, = struct.unpack('<Q', b[:8])
assert (8 + n) % 8 == 0
h = json.loads(b[8:8+n].decode())
e = h['x']; s, t = e['data_offsets']
raw = b[8+n+s:8+n+t]
if e['dtype'] == 'F32': v = np.frombuffer(raw, '<f4')
elif e['dtype'] == 'F16': v = np.frombuffer(raw, '<f2').astype(np.float32)
else: v = (np.frombuffer(raw, '<u2').astype(np.uint32) << 16).view(np.float32)
assert e['shape'] == [8, 8] and h['__metadata__'] == {'format': 'pt'}
sys.stdout.buffer.write(v.astype('<f4').tobytes())`;
        const out = runPython(script, undefined, [path]);
        const theirs = new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength));
        const st = await openSafetensors(path);
        expect(await st.readF32("x")).toEqual(theirs);
        await st.close();
      }
    });

    it("we read a file written by a pure-Python writer", async () => {
      const path = join(dir, "from-python.safetensors");
      const script = `import sys, json, struct, numpy as np
a = (np.arange(6, dtype=np.float32) / 3).reshape(2, 3)
c = np.array([1.0, -0.333, 65504.0], dtype=np.float16)
d = a.tobytes() + c.tobytes()
h = {'c': {'dtype': 'F16', 'shape': [3], 'data_offsets': [24, 30]}, 'a': {'dtype': 'F32', 'shape': [2, 3], 'data_offsets': [0, 24]}}
j = json.dumps(h).encode(); j += b' ' * (-len(j) % 8)
open(sys.argv[1], 'wb').write(struct.pack('<Q', len(j)) + j + d)`;
      runPython(script, undefined, [path]);
      const st = await openSafetensors(path);
      expect([...(await st.readF32("a"))]).toEqual([...new Float32Array([0, 1, 2, 3, 4, 5].map((v) => v / 3))]);
      expect([...(await st.readF32("c"))]).toEqual([1, -0.3330078125, 65504]);
      await st.close();
    });
  },
);
