// Reading and writing safetensors files: tensor by tensor through a file descriptor (checkpoints can
// exceed 2 GB), converting F32/F16/BF16/F64 to Float32Array and writing F32/F16/BF16. Header checks
// live in safetensors-header.ts; this module must not interpret tensor names (that is hf-model/peft).
import { endianness } from "node:os";
import type { FileHandle } from "node:fs/promises";
import { MasoError } from "../../errors.js";
import { writeAtomic, writeFully } from "../../fs/atomic-file.js";
import { openRegularFile } from "../../fs/fs-util.js";
import { decodeBf16, decodeF16, encodeBf16, encodeF16 } from "./float-convert.js";
import {
  DTYPE_BYTES,
  encodeHeader,
  parseHeaderJson,
  parseHeaderLength,
  type SafetensorsDtype,
  type SafetensorsEntry,
  type SafetensorsHeader,
} from "./safetensors-header.js";

export type { SafetensorsDtype, SafetensorsEntry, SafetensorsHeader } from "./safetensors-header.js";

/** Dtypes maso writes. */
export type FloatDtype = "F32" | "F16" | "BF16";
const FLOAT_READ: readonly SafetensorsDtype[] = ["F32", "F16", "BF16", "F64"];

/** A tensor to write: row-major float32 data with its shape. */
export interface TensorToWrite {
  name: string;
  shape: readonly number[];
  data: Float32Array;
}

export interface WriteOptions {
  /** Storage dtype (default F32); F16/BF16 round to nearest even. */
  dtype?: FloatDtype;
  /** The optional `__metadata__` string map. */
  metadata?: Record<string, string>;
}

/** Elements converted per chunk when reading or writing 16-bit data (bounds temporary memory). */
const CHUNK_ELEMS = 1 << 22;

function assertLittleEndian(): void {
  if (endianness() !== "LE") {
    throw new MasoError("SAFETENSORS_ENDIAN", "safetensors I/O needs a little-endian host", "run on x86-64 or ARM64");
  }
}

const numelOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

function notFloat(file: string, t: SafetensorsEntry): MasoError {
  return new MasoError(
    "SAFETENSORS_DTYPE",
    `${file}: tensor ${t.name} has dtype ${t.dtype}, which cannot be read as float32`,
    `float tensors must be ${FLOAT_READ.join(", ")}; use readInt for I32/I64`,
  );
}

/** Decode one tensor's raw bytes (any alignment) into float32 `out`. */
function decodeFloat(bytes: Uint8Array, dtype: SafetensorsDtype, out: Float32Array): void {
  const size = DTYPE_BYTES[dtype];
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  const n = aligned.length / size;
  switch (dtype) {
    case "F32":
      out.set(new Float32Array(aligned.buffer, aligned.byteOffset, n));
      return;
    case "F16":
      decodeF16(new Uint16Array(aligned.buffer, aligned.byteOffset, n), out);
      return;
    case "BF16":
      decodeBf16(new Uint16Array(aligned.buffer, aligned.byteOffset, n), out);
      return;
    case "F64":
      out.set(new Float64Array(aligned.buffer, aligned.byteOffset, n));
      return;
    default:
      throw new Error(`unreachable dtype ${dtype}`);
  }
}

function decodeInt(bytes: Uint8Array, dtype: SafetensorsDtype): Int32Array | BigInt64Array {
  const copy = bytes.slice();
  return dtype === "I32" ? new Int32Array(copy.buffer, 0, copy.length / 4) : new BigInt64Array(copy.buffer, 0, copy.length / 8);
}

/** An open safetensors file: the validated header plus tensor-by-tensor reads. Call close() when done. */
export interface SafetensorsReader {
  readonly header: SafetensorsHeader;
  /** The header entry of `name`; throws SAFETENSORS_MISSING if absent. */
  entry(name: string): SafetensorsEntry;
  /** Read a float tensor (F32/F16/BF16/F64) as a new Float32Array. */
  readF32(name: string): Promise<Float32Array>;
  /** Read a float tensor into `out`, whose length must equal the tensor's element count. */
  readF32Into(name: string, out: Float32Array): Promise<void>;
  /** Read an I32 or I64 tensor. */
  readInt(name: string): Promise<Int32Array | BigInt64Array>;
  close(): Promise<void>;
}

async function readFully(fh: FileHandle, target: Uint8Array, position: number, file: string): Promise<void> {
  let off = 0;
  while (off < target.length) {
    const { bytesRead } = await fh.read(target, off, Math.min(target.length - off, 1 << 30), position + off);
    if (bytesRead === 0) {
      throw new MasoError(
        "SAFETENSORS_TRUNCATED",
        `${file}: unexpected end of file at byte ${position + off}`,
        "the file changed or is truncated",
      );
    }
    off += bytesRead;
  }
}

/**
 * Open a safetensors file and validate its header (length bounds, JSON, dtypes, offsets, sizes).
 * Tensor data is read lazily, one tensor at a time.
 * @example
 * const st = await openSafetensors("model.safetensors");
 * try { const w = await st.readF32("model.norm.weight"); } finally { await st.close(); }
 */
export async function openSafetensors(path: string): Promise<SafetensorsReader> {
  assertLittleEndian();
  let fh: FileHandle;
  try {
    fh = await openRegularFile(path);
  } catch (e) {
    if (e instanceof MasoError) throw e; // a FIFO or device: named, never a blocking open
    throw new MasoError("SAFETENSORS_OPEN", `cannot open ${path}: ${(e as Error).message}`, "check the path and permissions");
  }
  try {
    const header = await readHeader(fh, path);
    return makeReader(fh, header);
  } catch (e) {
    await fh.close();
    throw e;
  }
}

async function readHeader(fh: FileHandle, file: string): Promise<SafetensorsHeader> {
  const { size } = await fh.stat();
  const prefix = new Uint8Array(Math.min(8, size));
  await readFully(fh, prefix, 0, file);
  const n = parseHeaderLength(prefix, size, file);
  const json = new Uint8Array(n);
  await readFully(fh, json, 8, file);
  return parseHeaderJson(json, size - 8 - n, file);
}

function makeReader(fh: FileHandle, header: SafetensorsHeader): SafetensorsReader {
  const byName = new Map(header.tensors.map((t) => [t.name, t]));
  const file = header.file;
  const entry = (name: string): SafetensorsEntry => {
    const t = byName.get(name);
    if (!t) throw new MasoError("SAFETENSORS_MISSING", `${file}: no tensor named ${name}`, "list the file's tensors with header.tensors");
    return t;
  };
  const readF32Into = async (name: string, out: Float32Array): Promise<void> => {
    const t = entry(name);
    if (!FLOAT_READ.includes(t.dtype)) throw notFloat(file, t);
    const n = numelOf(t.shape);
    if (out.length !== n) {
      throw new MasoError("SAFETENSORS_SHAPE", `${file}: tensor ${name} has ${n} elements, destination holds ${out.length}`);
    }
    const pos = header.dataStart + t.begin;
    if (t.dtype === "F32") {
      await readFully(fh, new Uint8Array(out.buffer, out.byteOffset, out.byteLength), pos, file);
      return;
    }
    const size = DTYPE_BYTES[t.dtype];
    const chunk = new Uint8Array(Math.min(n, CHUNK_ELEMS) * size);
    for (let i = 0; i < n; i += CHUNK_ELEMS) {
      const m = Math.min(CHUNK_ELEMS, n - i);
      const bytes = chunk.subarray(0, m * size);
      await readFully(fh, bytes, pos + i * size, file);
      decodeFloat(bytes, t.dtype, out.subarray(i, i + m));
    }
  };
  return {
    header,
    entry,
    readF32Into,
    async readF32(name) {
      const out = new Float32Array(numelOf(entry(name).shape));
      await readF32Into(name, out);
      return out;
    },
    async readInt(name) {
      const t = entry(name);
      if (t.dtype !== "I32" && t.dtype !== "I64") {
        throw new MasoError(
          "SAFETENSORS_DTYPE",
          `${file}: tensor ${name} has dtype ${t.dtype}, not I32/I64`,
          "use readF32 for float tensors",
        );
      }
      const bytes = new Uint8Array(t.end - t.begin);
      await readFully(fh, bytes, header.dataStart + t.begin, file);
      return decodeInt(bytes, t.dtype);
    },
    close: () => fh.close(),
  };
}

/** A tensor decoded from an in-memory safetensors buffer. */
export interface DecodedTensor {
  dtype: SafetensorsDtype;
  shape: number[];
  data: Float32Array | Int32Array | BigInt64Array;
}

/**
 * Parse a complete safetensors file held in memory (small files and tests). Float tensors decode
 * to Float32Array, I32/I64 to Int32Array/BigInt64Array; other dtypes throw SAFETENSORS_DTYPE.
 */
export function parseSafetensors(bytes: Uint8Array, file = "<buffer>"): { header: SafetensorsHeader; tensors: Map<string, DecodedTensor> } {
  assertLittleEndian();
  const n = parseHeaderLength(bytes.subarray(0, 8), bytes.length, file);
  const header = parseHeaderJson(bytes.subarray(8, 8 + n), bytes.length - 8 - n, file);
  const tensors = new Map<string, DecodedTensor>();
  for (const t of header.tensors) {
    const raw = bytes.subarray(header.dataStart + t.begin, header.dataStart + t.end);
    let data: DecodedTensor["data"];
    if (FLOAT_READ.includes(t.dtype)) {
      data = new Float32Array(numelOf(t.shape));
      decodeFloat(raw, t.dtype, data);
    } else if (t.dtype === "I32" || t.dtype === "I64") {
      data = decodeInt(raw, t.dtype);
    } else {
      throw notFloat(file, t);
    }
    tensors.set(t.name, { dtype: t.dtype, shape: t.shape, data });
  }
  return { header, tensors };
}

/** Lay tensors out back to back in the given order and build the header entries. */
function layout(tensors: readonly TensorToWrite[], dtype: FloatDtype, file: string): SafetensorsEntry[] {
  const size = DTYPE_BYTES[dtype];
  const seen = new Set<string>();
  let off = 0;
  return tensors.map((t) => {
    if (t.name === "__metadata__" || seen.has(t.name)) {
      throw new MasoError("SAFETENSORS_WRITE", `${file}: tensor name ${t.name} is reserved or repeated`, "give every tensor a unique name");
    }
    seen.add(t.name);
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0) || numelOf(t.shape) !== t.data.length) {
      throw new MasoError(
        "SAFETENSORS_WRITE",
        `${file}: tensor ${t.name} has shape [${t.shape.join(", ")}] but ${t.data.length} values`,
        "pass the shape that matches the data",
      );
    }
    const begin = off;
    off += t.data.length * size;
    return { name: t.name, dtype, shape: [...t.shape], begin, end: off };
  });
}

/** Convert a slice of float32 data to its on-disk bytes. */
function encodeChunk(src: Float32Array, dtype: FloatDtype): Uint8Array {
  if (dtype === "F32") return new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
  const out = new Uint16Array(src.length);
  if (dtype === "F16") encodeF16(src, out);
  else encodeBf16(src, out);
  return new Uint8Array(out.buffer);
}

/** Exact byte size of the file writeSafetensors would produce. */
export function safetensorsFileSize(tensors: readonly TensorToWrite[], opts: WriteOptions = {}): number {
  const entries = layout(tensors, opts.dtype ?? "F32", "<size>");
  return encodeHeader(entries, opts.metadata).length + (entries.at(-1)?.end ?? 0);
}

/** Serialise tensors to an in-memory safetensors file (small files and tests). */
export function encodeSafetensors(tensors: readonly TensorToWrite[], opts: WriteOptions = {}): Uint8Array {
  assertLittleEndian();
  const dtype = opts.dtype ?? "F32";
  const entries = layout(tensors, dtype, "<buffer>");
  const head = encodeHeader(entries, opts.metadata);
  const out = new Uint8Array(head.length + (entries.at(-1)?.end ?? 0));
  out.set(head, 0);
  for (let i = 0; i < tensors.length; i++) out.set(encodeChunk(tensors[i].data, dtype), head.length + entries[i].begin);
  return out;
}

/**
 * Write tensors to `path` as safetensors, streaming one chunk at a time, through a temp file that
 * is renamed into place when complete.
 * @example
 * await writeSafetensors("w.safetensors", [{ name: "w", shape: [2, 2], data }], { dtype: "BF16" });
 */
export async function writeSafetensors(path: string, tensors: readonly TensorToWrite[], opts: WriteOptions = {}): Promise<void> {
  assertLittleEndian();
  const dtype = opts.dtype ?? "F32";
  const entries = layout(tensors, dtype, path);
  const head = encodeHeader(entries, opts.metadata);
  await writeAtomic(path, async (fh) => {
    await writeFully(fh, head, 0);
    const size = DTYPE_BYTES[dtype];
    for (let i = 0; i < tensors.length; i++) {
      const data = tensors[i].data;
      for (let j = 0; j < data.length; j += CHUNK_ELEMS) {
        const part = data.subarray(j, Math.min(data.length, j + CHUNK_ELEMS));
        await writeFully(fh, encodeChunk(part, dtype), head.length + entries[i].begin + j * size);
      }
    }
  });
}
