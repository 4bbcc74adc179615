// The weights a generation replica needs from rank 0 after an update: every LoRA adapter and, for a
// fully trained model, the base — exact fp32 bytes, so a replica samples exactly what rank 0
// would. Layout: 4-byte header length, JSON header (version, tensor names and lengths), raw data.
import type { Decoder } from "../engine/model/decoder.js";
import { MasoError } from "../errors.js";

interface WeightsHeader {
  version: number;
  tensors: { name: string; length: number }[];
}

/** The decoder's tensors a weight sync carries, by name, in a fixed order. */
function syncedTensors(model: Decoder, withBase: boolean): [string, Float32Array][] {
  const out: [string, Float32Array][] = withBase ? [["base", model.params.data]] : [];
  for (const name of [...model.adapters.keys()].sort()) out.push([`adapter/${name}`, model.adapters.get(name)!.params.data]);
  return out;
}

/** Packs the synced tensors of `model` at `version`. */
export function packWeights(model: Decoder, withBase: boolean, version: number): Uint8Array {
  const tensors = syncedTensors(model, withBase);
  const header = new TextEncoder().encode(JSON.stringify({ version, tensors: tensors.map(([name, d]) => ({ name, length: d.length })) }));
  const size = 4 + header.length + tensors.reduce((a, [, d]) => a + d.byteLength, 0);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  let o = 4 + header.length;
  for (const [, d] of tensors) {
    out.set(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), o);
    o += d.byteLength;
  }
  return out;
}

/** Copies packed weights into `model`; every tensor must exist with the same length. Returns the version. */
export function applyWeights(model: Decoder, withBase: boolean, bytes: Uint8Array): number {
  const bad = (what: string) =>
    new MasoError("WEIGHTS_MISMATCH", `weight sync: ${what}`, "every replica must be built from the same run config");
  if (bytes.length < 4) throw bad("message too short");
  const hl = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + hl))) as WeightsHeader;
  const live = syncedTensors(model, withBase);
  if (header.tensors.map((t) => t.name).join(",") !== live.map(([n]) => n).join(","))
    throw bad(`tensors [${header.tensors.map((t) => t.name)}] sent, [${live.map(([n]) => n)}] here`);
  let o = 4 + hl;
  live.forEach(([name, dst], i) => {
    const n = header.tensors[i].length;
    if (n !== dst.length) throw bad(`${name} has ${n} values, ${dst.length} here`);
    if (o + n * 4 > bytes.length) throw bad("message shorter than its header says");
    // the payload offset may not be 4-byte aligned, so copy bytes rather than view floats
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(bytes.subarray(o, o + n * 4));
    o += n * 4;
  });
  model.weightsWritten();
  return header.version;
}
