// The weights a generation replica needs from rank 0 after an update: every LoRA adapter and, for a
// fully trained model, the base — exact fp32 bytes, so a replica samples exactly what rank 0
// would. Layout: 4-byte header length, JSON header (version, tensor names and lengths), raw data.
import { createHash } from "node:crypto";
import type { Decoder } from "../engine/model/decoder.js";
import type { TrainUnit } from "../rl/update/units.js";
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

/** Packs a JSON header and fp32 tensors: 4-byte header length, the header, then each tensor's bytes. */
export function packTensors(header: object, tensors: readonly Float32Array[]): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(4 + head.length + tensors.reduce((a, d) => a + d.byteLength, 0));
  new DataView(out.buffer).setUint32(0, head.length, true);
  out.set(head, 4);
  let o = 4 + head.length;
  for (const d of tensors) {
    out.set(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), o);
    o += d.byteLength;
  }
  return out;
}

/**
 * Reads packTensors' layout, `lengths(header)` giving each tensor's length; every tensor is a copy
 * (the payload offset may not be 4-byte aligned). A malformed message throws `bad(what)`.
 */
export function unpackTensors<H>(
  bytes: Uint8Array,
  lengths: (header: H) => readonly number[],
  bad: (what: string) => Error,
): { header: H; tensors: Float32Array[] } {
  if (bytes.length < 4) throw bad("message too short");
  const hl = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + hl > bytes.length) throw bad("message shorter than its header length");
  let header: H;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + hl))) as H;
  } catch {
    throw bad("its header is not JSON");
  }
  const ns = lengths(header);
  let o = 4 + hl;
  const tensors = ns.map((n) => {
    if (!Number.isInteger(n) || n < 0 || o + n * 4 > bytes.length) throw bad("message shorter than its header says");
    const t = new Float32Array(n);
    new Uint8Array(t.buffer).set(bytes.subarray(o, o + n * 4));
    o += n * 4;
    return t;
  });
  if (o !== bytes.length) throw bad("message longer than its header says");
  return { header, tensors };
}

/** Packs the synced tensors of `model` at `version`. */
export function packWeights(model: Decoder, withBase: boolean, version: number): Uint8Array {
  return packNamed(version, syncedTensors(model, withBase));
}

/** The tensor lengths a header of named tensors lists (none when it lists none), for unpackTensors. */
const namedLengths = (h: WeightsHeader): number[] => (Array.isArray(h?.tensors) ? h.tensors.map((t) => t.length) : []);

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

/** The tensors a data-parallel rank holds like rank 0: every trained unit's parameters, in name order; with `moments`, each AdamW's m and v too. */
function unitTensors(units: ReadonlyMap<string, TrainUnit>, moments: boolean): [string, Float32Array][] {
  const out: [string, Float32Array][] = [];
  for (const name of [...units.keys()].sort()) {
    const u = units.get(name)!;
    out.push([name, u.params.data]);
    if (moments)
      for (const g of [...u.optimizer.state.moments.keys()].sort()) {
        const mv = u.optimizer.state.moments.get(g)!;
        out.push([`${name}/${g}/m`, mv.m], [`${name}/${g}/v`, mv.v]);
      }
  }
  return out;
}

/** sha256 of every trained unit's parameters: what a data-parallel rank checks its own against after an update. */
export function unitsDigest(units: ReadonlyMap<string, TrainUnit>): string {
  const h = createHash("sha256");
  for (const [name, d] of unitTensors(units, false)) h.update(name).update(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
  return h.digest("hex");
}

interface TrainStateHeader extends WeightsHeader {
  steps: Record<string, number>;
}

/** Rank 0's training state for a data-parallel rank after a checkpoint load: parameters, AdamW moments and step counts. */
export function packTrainState(units: ReadonlyMap<string, TrainUnit>, version: number): Uint8Array {
  const tensors = unitTensors(units, true);
  const steps = Object.fromEntries([...units].map(([n, u]) => [n, u.optimizer.state.step]));
  const header: TrainStateHeader = { version, steps, tensors: tensors.map(([name, d]) => ({ name, length: d.length })) };
  return packTensors(
    header,
    tensors.map(([, d]) => d),
  );
}

/** Copies packTrainState's message into `units`, which must match it tensor for tensor; returns its version. */
export function applyTrainState(units: ReadonlyMap<string, TrainUnit>, bytes: Uint8Array): number {
  const bad = (what: string) =>
    new MasoError("WEIGHTS_MISMATCH", `training state sync: ${what}`, "every rank must be built from the same run config");
  const { header, tensors } = unpackTensors<TrainStateHeader>(bytes, namedLengths, bad);
  const live = unitTensors(units, true);
  if (header.tensors.map((t) => t.name).join(",") !== live.map(([n]) => n).join(","))
    throw bad(`tensors [${header.tensors.map((t) => t.name)}] sent, [${live.map(([n]) => n)}] here`);
  live.forEach(([name, dst], i) => {
    if (tensors[i].length !== dst.length) throw bad(`${name} has ${tensors[i].length} values, ${dst.length} here`);
    dst.set(tensors[i]);
  });
  for (const [name, u] of units) {
    const step = header.steps?.[name];
    if (!Number.isInteger(step) || step < 0) throw bad(`no optimiser step count for ${name}`);
    u.optimizer.state.step = step;
  }
  return header.version;
}

/** Packs named tensors of `version`: the synced weights, or a kept generation version a replica fetches under asynchronous RL. */
export function packNamed(version: number, tensors: readonly [string, Float32Array][]): Uint8Array {
  const header: WeightsHeader = { version, tensors: tensors.map(([name, d]) => ({ name, length: d.length })) };
  return packTensors(
    header,
    tensors.map(([, d]) => d),
  );
}

/** Reads packNamed's message: its version and its tensors by name (copies). */
export function unpackNamed(bytes: Uint8Array): { version: number; tensors: [string, Float32Array][] } {
  const bad = (what: string) =>
    new MasoError("WEIGHTS_MISMATCH", `generation weights: ${what}`, "every replica must be built from the same run config");
  const { header, tensors } = unpackTensors<WeightsHeader>(bytes, namedLengths, bad);
  if (!Number.isInteger(header.version)) throw bad("no version in its header");
  return { version: header.version, tensors: header.tensors.map((t, i) => [String(t.name), tensors[i]]) };
}
