// A minimal GGUF v3 container writer: typed metadata key/values, tensor infos and aligned tensor
// data, little-endian, as llama.cpp's gguf.c reads them. It knows the file format only, nothing of
// model architectures or tokenizers (see gguf.ts and gguf-tokenizer.ts).
import { MasoError } from "../../errors.js";

/** GGUF metadata value types (gguf.h). */
export const GGUF_TYPE = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;

/** ggml tensor types this writer emits. */
export const GGML_TYPE = { F32: 0, F16: 1, BF16: 30 } as const;
export type GgmlType = (typeof GGML_TYPE)[keyof typeof GGML_TYPE];

/** A metadata value with its GGUF type. Arrays hold one element type. */
export type GgufValue =
  | { type: "u32"; value: number }
  | { type: "i32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "string[]"; value: readonly string[] }
  | { type: "i32[]"; value: ArrayLike<number> };

/** One tensor: GGUF dims are innermost first, so an HF (out, in) matrix is written as [in, out]. */
export interface GgufTensor {
  name: string;
  dims: number[];
  type: GgmlType;
  /** raw little-endian element bytes (F32: 4 per element, F16 and BF16: 2) */
  data: Uint8Array;
}

/** Default alignment of tensor data (general.alignment unset). */
export const GGUF_ALIGNMENT = 32;
const MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32

class ByteSink {
  private chunks: Uint8Array[] = [];
  length = 0;
  private scratch = new DataView(new ArrayBuffer(8));
  private raw(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }
  private num(n: number, put: (v: DataView) => void): void {
    put(this.scratch);
    this.raw(new Uint8Array(this.scratch.buffer.slice(0, n)));
  }
  u8 = (x: number) => this.num(1, (v) => v.setUint8(0, x));
  u32 = (x: number) => this.num(4, (v) => v.setUint32(0, x, true));
  i32 = (x: number) => this.num(4, (v) => v.setInt32(0, x, true));
  f32 = (x: number) => this.num(4, (v) => v.setFloat32(0, x, true));
  u64 = (x: number) => this.num(8, (v) => v.setBigUint64(0, BigInt(x), true));
  str(s: string): void {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.raw(b);
  }
  bytes(b: Uint8Array): void {
    this.raw(b);
  }
  pad(alignment: number): void {
    const n = (alignment - (this.length % alignment)) % alignment;
    if (n > 0) this.raw(new Uint8Array(n));
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }
}

function writeValue(s: ByteSink, v: GgufValue): void {
  switch (v.type) {
    case "u32":
      s.u32(GGUF_TYPE.UINT32);
      s.u32(v.value);
      return;
    case "i32":
      s.u32(GGUF_TYPE.INT32);
      s.i32(v.value);
      return;
    case "f32":
      s.u32(GGUF_TYPE.FLOAT32);
      s.f32(v.value);
      return;
    case "bool":
      s.u32(GGUF_TYPE.BOOL);
      s.u8(v.value ? 1 : 0);
      return;
    case "string":
      s.u32(GGUF_TYPE.STRING);
      s.str(v.value);
      return;
    case "string[]":
      s.u32(GGUF_TYPE.ARRAY);
      s.u32(GGUF_TYPE.STRING);
      s.u64(v.value.length);
      for (const x of v.value) s.str(x);
      return;
    case "i32[]":
      s.u32(GGUF_TYPE.ARRAY);
      s.u32(GGUF_TYPE.INT32);
      s.u64(v.value.length);
      for (let i = 0; i < v.value.length; i++) s.i32(v.value[i]);
      return;
  }
}

/** Tensor description without data, for {@link encodeGgufHeader}. */
export type GgufTensorInfo = Omit<GgufTensor, "data">;

/** Bytes of a tensor's data. */
export const tensorBytes = (t: GgufTensorInfo): number => t.dims.reduce((a, b) => a * b, 1) * (t.type === GGML_TYPE.F32 ? 4 : 2);

const padTo = (n: number): number => (GGUF_ALIGNMENT - (n % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;

/**
 * Everything before the tensor data: header, metadata, tensor infos and padding. Tensor data then
 * follows in the given order, each padded to {@link GGUF_ALIGNMENT} bytes.
 */
export function encodeGgufHeader(metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensorInfo[]): Uint8Array {
  const names = new Set<string>();
  const s = new ByteSink();
  s.u32(MAGIC);
  s.u32(3);
  s.u64(tensors.length);
  s.u64(metadata.size);
  for (const [key, value] of metadata) {
    s.str(key);
    writeValue(s, value);
  }
  let offset = 0;
  for (const t of tensors) {
    if (names.has(t.name)) throw new MasoError("GGUF_TENSOR", `tensor ${t.name} is written twice`);
    names.add(t.name);
    s.str(t.name);
    s.u32(t.dims.length);
    for (const d of t.dims) s.u64(d);
    s.u32(t.type);
    s.u64(offset);
    const size = tensorBytes(t);
    offset += size + padTo(size);
  }
  s.pad(GGUF_ALIGNMENT);
  return s.concat();
}

/** Padding that follows a tensor's data. */
export const tensorPadding = (t: GgufTensorInfo): Uint8Array => new Uint8Array(padTo(tensorBytes(t)));

/** A whole GGUF v3 file in memory (small models and tests; gguf.ts streams big ones). */
export function encodeGguf(metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensor[]): Uint8Array {
  for (const t of tensors) {
    if (t.data.length !== tensorBytes(t))
      throw new MasoError("GGUF_TENSOR", `tensor ${t.name}: ${t.data.length} bytes for dims [${t.dims}]`);
  }
  const parts = [encodeGgufHeader(metadata, tensors)];
  for (const t of tensors) parts.push(t.data, tensorPadding(t));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
