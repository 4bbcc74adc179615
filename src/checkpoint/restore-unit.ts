// Restores one trainable unit of a live worker group (a LoRA adapter, or the base weights) and that
// unit's AdamW state from the group's part of a verified checkpoint, leaving every other unit, the
// value head and the update counter as they are: what rolling back one collapsing role needs.
// In-process only; a worker process would need this behind its own message.
import { join } from "node:path";
import { loadHfModel } from "../engine/io/hf-model.js";
import { loadAdapter } from "../engine/io/peft.js";
import { MasoError } from "../errors.js";
import type { WorkerGroup } from "../runtime/worker-group/worker-group.js";
import type { PartReader } from "./types.js";

interface UnitMeta {
  name: string;
  step: number;
  groups: string[];
}

const mismatch = (what: string) =>
  new MasoError("CHECKPOINT_MODEL_MISMATCH", what, "roll back with the same model, cast and trainer settings that wrote the checkpoint");

/** The saved moment matching `dst` in size (checked before anything is written). */
function sameSize(dst: Float32Array, src: Float32Array | undefined, what: string): Float32Array {
  if (!src || src.length !== dst.length) throw mismatch(`${what}: checkpoint has ${src?.length ?? 0} values, the live group ${dst.length}`);
  return src;
}

/** The unit's weights as the checkpoint part holds them (adapters in PEFT layout, the base in HF layout). */
async function unitWeights(r: PartReader, wg: WorkerGroup, unit: string): Promise<Float32Array> {
  if (unit.startsWith("adapter:")) {
    const name = unit.slice("adapter:".length);
    return (await loadAdapter(join(r.dir, "adapters", name), wg.model.config)).params.data;
  }
  const { params } = await loadHfModel(join(r.dir, "hf"));
  // laid out as the live table (one block, tensors in spec order), so one copy restores the whole base
  const out = new Float32Array(wg.model.params.data.length);
  let at = 0;
  for (const s of wg.model.params.specs) {
    const n = wg.model.params.get(s.name).length;
    const from = params.get(s.name);
    if (from.length !== n) throw mismatch(`${unit}/${s.name}: checkpoint has ${from.length} values, the live group ${n}`);
    out.set(from, at);
    at += n;
  }
  return out;
}

/**
 * Overwrites unit `unit` ("adapter:<name>" or "base") of `wg` — weights, AdamW moments and AdamW
 * step — with the checkpoint part `r` of the same group, and tells the generator the weights changed.
 * Throws CHECKPOINT_MODEL_MISMATCH when the part is another model's or shapes differ.
 * @example
 * await restoreUnit(ckpt.part("wg0-base"), rt.workers.base, "adapter:checker");
 */
export async function restoreUnit(r: PartReader, wg: WorkerGroup, unit: string): Promise<void> {
  const u = wg.units.get(unit);
  if (unit !== "base" && !unit.startsWith("adapter:")) throw mismatch(`${unit} is not a policy unit ("base" or "adapter:<name>")`);
  if (!u) throw mismatch(`worker group "${wg.name}" has no trainable unit ${unit} (it has: ${[...wg.units.keys()].join(", ")})`);
  const meta = (await r.json("worker.json")) as { model: string; units: UnitMeta[] };
  if (meta.model !== wg.name) throw mismatch(`the checkpoint part holds model "${meta.model}", the live group is "${wg.name}"`);
  const saved = meta.units.find((x) => x.name === unit);
  if (!saved) throw mismatch(`the checkpoint part of "${wg.name}" has no unit ${unit}`);
  // read everything before writing anything, so a refused restore leaves the unit as it was
  const weights = await unitWeights(r, wg, unit);
  const moments = await r.tensors("optimizers.safetensors");
  if (weights.length !== u.params.data.length)
    throw mismatch(`${unit}: checkpoint has ${weights.length} values, the live group ${u.params.data.length}`);
  const copies = saved.groups.flatMap((g) => {
    const mv = u.optimizer.state.moments.get(g);
    if (!mv) throw mismatch(`${unit} has no optimiser group ${g}`);
    return [
      [mv.m, sameSize(mv.m, moments.get(`${unit}/${g}.m`), `${unit}/${g}.m`)],
      [mv.v, sameSize(mv.v, moments.get(`${unit}/${g}.v`), `${unit}/${g}.v`)],
    ] as const;
  });
  u.params.data.set(weights);
  for (const [dst, src] of copies) dst.set(src);
  u.optimizer.state.step = saved.step;
  wg.weightVersions.bump("checkpoint-load");
}
