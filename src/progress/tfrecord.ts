// The TFRecord framing TensorBoard's event files use, and the little protobuf encoding their
// messages need, written by hand so maso needs no TensorFlow or protobuf package. A record is
// uint64 length, masked CRC32C of those 8 bytes, the data, masked CRC32C of the data (all little
// endian). Protobuf: varint keys and integers, length-delimited strings and messages, fixed64
// doubles and fixed32 floats.

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli, reflected), as TFRecord checksums use. */
export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC32C_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: rotate right by 15 and add a constant, so CRCs of CRCs stay well spread. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
}

/** One TFRecord around `data`. */
export function tfRecord(data: Uint8Array): Buffer {
  const head = Buffer.alloc(12);
  head.writeBigUInt64LE(BigInt(data.length), 0);
  head.writeUInt32LE(maskedCrc32c(head.subarray(0, 8)), 8);
  const tail = Buffer.alloc(4);
  tail.writeUInt32LE(maskedCrc32c(data), 0);
  return Buffer.concat([head, data, tail]);
}

/** A protobuf message under construction: fields are appended in the order written. */
export class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private varint(v: bigint): void {
    const bytes: number[] = [];
    let x = BigInt.asUintN(64, v); // negative int64s are ten-byte two's complement varints
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) b |= 0x80;
      bytes.push(b);
    } while (x !== 0n);
    this.parts.push(Buffer.from(bytes));
  }

  private key(field: number, wireType: 0 | 1 | 2 | 5): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  /** An int64 / int32 / enum field (varint). */
  int(field: number, v: number | bigint): this {
    this.key(field, 0);
    this.varint(BigInt(v));
    return this;
  }

  /** A double field (fixed64). */
  double(field: number, v: number): this {
    this.key(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v, 0);
    this.parts.push(b);
    return this;
  }

  /** A float field (fixed32). */
  float(field: number, v: number): this {
    this.key(field, 5);
    const b = Buffer.alloc(4);
    b.writeFloatLE(v, 0);
    this.parts.push(b);
    return this;
  }

  /** A bytes, string or embedded message field (length-delimited). */
  bytes(field: number, v: Uint8Array | string): this {
    const data = typeof v === "string" ? Buffer.from(v, "utf8") : v;
    this.key(field, 2);
    this.varint(BigInt(data.length));
    this.parts.push(Buffer.from(data));
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}
