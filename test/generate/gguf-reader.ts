// A small GGUF v3 reader for the export tests: parses what gguf-writer.ts writes (header, typed
// metadata, tensor infos, aligned data) independently of the writer's code. Test helper only.
export interface ReadGguf {
  version: number;
  metadata: Map<string, unknown>;
  tensors: Map<string, { dims: number[]; type: number; offset: number }>;
  dataStart: number;
  f32(name: string): Float32Array;
  u16(name: string): Uint16Array;
}

export function readGguf(bytes: Uint8Array): ReadGguf {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  const at = (n: number) => {
    o += n;
    return o - n;
  };
  const u32 = () => dv.getUint32(at(4), true);
  const u64 = () => Number(dv.getBigUint64(at(8), true));
  const str = () => {
    const n = u64();
    o += n;
    return new TextDecoder().decode(bytes.subarray(o - n, o));
  };
  const scalar = (t: number): unknown => {
    switch (t) {
      case 4:
        return u32();
      case 5:
        return dv.getInt32(at(4), true);
      case 6:
        return dv.getFloat32(at(4), true);
      case 7:
        return dv.getUint8(at(1)) !== 0;
      case 8:
        return str();
      default:
        throw new Error(`value type ${t} not expected`);
    }
  };
  if (u32() !== 0x46554747) throw new Error("bad magic");
  const version = u32();
  const nTensors = u64();
  const nKv = u64();
  const metadata = new Map<string, unknown>();
  for (let i = 0; i < nKv; i++) {
    const key = str();
    const t = u32();
    if (t === 9) {
      const et = u32();
      const n = u64();
      const arr: unknown[] = [];
      for (let j = 0; j < n; j++) arr.push(scalar(et));
      metadata.set(key, arr);
    } else metadata.set(key, scalar(t));
  }
  const tensors = new Map<string, { dims: number[]; type: number; offset: number }>();
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    const nd = u32();
    const dims: number[] = [];
    for (let j = 0; j < nd; j++) dims.push(u64());
    const type = u32();
    tensors.set(name, { dims, type, offset: u64() });
  }
  const dataStart = Math.ceil(o / 32) * 32;
  const slice = (name: string, width: number) => {
    const t = tensors.get(name);
    if (!t) throw new Error(`no tensor ${name}`);
    const n = t.dims.reduce((a, b) => a * b, 1);
    return bytes.slice(dataStart + t.offset, dataStart + t.offset + n * width).buffer;
  };
  return {
    version,
    metadata,
    tensors,
    dataStart,
    f32: (name) => new Float32Array(slice(name, 4)),
    u16: (name) => new Uint16Array(slice(name, 2)),
  };
}
