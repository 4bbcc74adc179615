// The safetensors header: its dtype table, and parsing plus validation of the 8-byte length and
// the JSON that follows. Pure functions over bytes already read; no file access happens here, and
// every defect in the header becomes a MasoError naming the file (and tensor), never a crash.
import type { ErrorCode } from "../../error-codes.js";
import { MasoError } from "../../errors.js";

/** Bytes per element of every dtype the safetensors format defines. */
export const DTYPE_BYTES = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
} as const;

export type SafetensorsDtype = keyof typeof DTYPE_BYTES;

/** One tensor's header entry; `begin`/`end` are byte offsets relative to the data section. */
export interface SafetensorsEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  /** Where the header came from, for error messages. */
  file: string;
  /** Bytes of JSON header (the u64 at the start of the file). */
  headerBytes: number;
  /** Absolute offset of the data section: 8 + headerBytes. */
  dataStart: number;
  /** Tensors in header order. */
  tensors: SafetensorsEntry[];
  metadata: Record<string, string>;
}

/** A header larger than this is treated as corrupt (the reference implementation uses the same bound). */
export const MAX_HEADER_BYTES = 100_000_000;

const corrupt = (code: ErrorCode, file: string, what: string): MasoError =>
  new MasoError(code, `${file}: ${what}`, "the safetensors file is corrupt or truncated; re-download or re-save it");

/**
 * Validate the 8-byte length prefix against the file size and return the header length.
 * @param prefix the first 8 bytes of the file (fewer means the file is too short)
 */
export function parseHeaderLength(prefix: Uint8Array, fileSize: number, file: string): number {
  if (prefix.length < 8 || fileSize < 8) {
    throw corrupt("SAFETENSORS_TRUNCATED", file, `file has ${fileSize} bytes, too short for the 8-byte header length`);
  }
  const n = new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true);
  if (n < 2n || n > BigInt(MAX_HEADER_BYTES)) {
    throw corrupt("SAFETENSORS_HEADER_LENGTH", file, `header length ${n} is outside 2..${MAX_HEADER_BYTES} bytes`);
  }
  if (n > BigInt(fileSize - 8)) {
    throw corrupt("SAFETENSORS_HEADER_LENGTH", file, `header length ${n} exceeds the ${fileSize - 8} bytes after the prefix`);
  }
  return Number(n);
}

const isNonNegInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/**
 * Parse and validate the JSON header. Checks dtypes, shapes, that offsets lie inside the data
 * section, that no two tensors overlap, and that each byte range holds exactly numel * dtype size.
 * @param json the header bytes (trailing spaces allowed)
 * @param dataBytes size of the data section: file size - 8 - header length
 */
export function parseHeaderJson(json: Uint8Array, dataBytes: number, file: string): SafetensorsHeader {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(json));
  } catch (e) {
    throw corrupt("SAFETENSORS_HEADER_JSON", file, `header is not valid UTF-8 JSON (${(e as Error).message})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw corrupt("SAFETENSORS_HEADER_JSON", file, "header is not a JSON object");
  }
  const metadata: Record<string, string> = {};
  const tensors: SafetensorsEntry[] = [];
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw corrupt("SAFETENSORS_HEADER_JSON", file, "__metadata__ is not an object of strings");
      }
      for (const [k, v] of Object.entries(value)) {
        if (typeof v !== "string") throw corrupt("SAFETENSORS_HEADER_JSON", file, `__metadata__.${k} is not a string`);
        metadata[k] = v;
      }
      continue;
    }
    tensors.push(parseEntry(name, value, dataBytes, file));
  }
  checkNoOverlap(tensors, file);
  return { file, headerBytes: json.length, dataStart: 8 + json.length, tensors, metadata };
}

function parseEntry(name: string, value: unknown, dataBytes: number, file: string): SafetensorsEntry {
  const where = `tensor ${name}`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw corrupt("SAFETENSORS_HEADER_JSON", file, `${where} has no {dtype, shape, data_offsets} entry`);
  }
  const { dtype, shape, data_offsets: offsets } = value as Record<string, unknown>;
  if (typeof dtype !== "string" || !Object.hasOwn(DTYPE_BYTES, dtype)) {
    throw new MasoError(
      "SAFETENSORS_DTYPE",
      `${file}: ${where} has unknown dtype ${JSON.stringify(dtype)}`,
      `supported dtypes are ${Object.keys(DTYPE_BYTES).join(", ")}`,
    );
  }
  if (!Array.isArray(shape) || !shape.every(isNonNegInt)) {
    throw corrupt("SAFETENSORS_HEADER_JSON", file, `${where} has invalid shape ${JSON.stringify(shape)}`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegInt) || offsets[0] > offsets[1]) {
    throw corrupt("SAFETENSORS_OFFSETS", file, `${where} has invalid data_offsets ${JSON.stringify(offsets)}`);
  }
  const [begin, end] = offsets as [number, number];
  if (end > dataBytes) {
    throw corrupt(
      "SAFETENSORS_OFFSETS",
      file,
      `${where} ends at byte ${end} but the data section has ${dataBytes} bytes (truncated file?)`,
    );
  }
  const n = (shape as number[]).reduce((a, b) => a * b, 1);
  const bytes = n * DTYPE_BYTES[dtype as SafetensorsDtype];
  if (bytes !== end - begin) {
    throw corrupt(
      "SAFETENSORS_SIZE_MISMATCH",
      file,
      `${where}: shape [${(shape as number[]).join(", ")}] of ${dtype} needs ${bytes} bytes, data_offsets span ${end - begin}`,
    );
  }
  return { name, dtype: dtype as SafetensorsDtype, shape: shape as number[], begin, end };
}

function checkNoOverlap(tensors: readonly SafetensorsEntry[], file: string): void {
  const sorted = tensors.filter((t) => t.end > t.begin).sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1];
    const b = sorted[i];
    if (b.begin < a.end) {
      throw corrupt("SAFETENSORS_OFFSETS", file, `tensors ${a.name} [${a.begin}, ${a.end}) and ${b.name} [${b.begin}, ${b.end}) overlap`);
    }
  }
}

/**
 * Serialise a header: JSON (metadata first, then tensors in the given order) padded with spaces so
 * the data section starts on an 8-byte boundary.
 */
export function encodeHeader(tensors: readonly SafetensorsEntry[], metadata: Record<string, string> | undefined): Uint8Array {
  const obj: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) obj.__metadata__ = metadata;
  for (const t of tensors) obj[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [t.begin, t.end] };
  const json = new TextEncoder().encode(JSON.stringify(obj));
  const padded = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + padded).fill(0x20, 8);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  return out;
}
