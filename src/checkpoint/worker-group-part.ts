// A worker group as a checkpoint part: its model (base, adapters, value head), the AdamW state of
// every trainable unit and the group's update counter. The controller's process saves its in-process
// groups with it; a worker process saves its own group with it, in place.
import { MasoError } from "../errors.js";
import type { WorkerGroup } from "../runtime/worker-group/worker-group.js";
import { decoderPart } from "./parts.js";
import type { Checkpointable } from "./types.js";

interface WorkerMeta {
  model: string;
  updates: number;
  units: { name: string; step: number; groups: string[] }[];
}

const corrupt = (part: string, what: string) =>
  new MasoError(
    "CHECKPOINT_MODEL_MISMATCH",
    `part '${part}': ${what}`,
    "resume with the same model, cast and trainer settings that wrote the checkpoint",
  );

function copyInto(part: string, dst: Float32Array, src: Float32Array | undefined, what: string): void {
  if (!src || src.length !== dst.length)
    throw corrupt(part, `${what}: checkpoint has ${src?.length ?? 0} values, the live optimiser ${dst.length}`);
  dst.set(src);
}

/** Safe part name for a model name (lowercase, `[a-z0-9_-]`); the real name is kept in worker.json. */
export function workerPartName(model: string, index: number): string {
  const slug = model
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, "_")
    .slice(0, 48);
  return `wg${index}-${slug}`;
}

/**
 * One worker group as a checkpoint part: the Decoder (via {@link decoderPart}: `hf/`, `adapters/`,
 * `value_head.safetensors`, `model.json`), `optimizers.safetensors` (m and v of every unit's AdamW)
 * and `worker.json` (model name, update counter, each unit's AdamW step). Loading overwrites the
 * live group in place; units and shapes must match.
 * @example
 * const parts = Object.values(rt.workers).map((wg, i) => workerGroupPart(workerPartName(wg.name, i), wg));
 */
export function workerGroupPart(name: string, wg: WorkerGroup): Checkpointable {
  const model = decoderPart(name, wg.model);
  return {
    name,
    async save(w) {
      await model.save(w);
      const tensors = [];
      const meta: WorkerMeta = { model: wg.name, updates: wg.updates, units: [] };
      for (const [unit, u] of wg.units) {
        const groups: string[] = [];
        for (const [g, mv] of u.optimizer.state.moments) {
          groups.push(g);
          tensors.push({ name: `${unit}/${g}.m`, shape: [mv.m.length], data: mv.m });
          tensors.push({ name: `${unit}/${g}.v`, shape: [mv.v.length], data: mv.v });
        }
        meta.units.push({ name: unit, step: u.optimizer.state.step, groups });
      }
      await w.tensors("optimizers.safetensors", tensors);
      await w.json("worker.json", meta);
    },
    async load(r) {
      const meta = (await r.json("worker.json")) as WorkerMeta;
      if (meta.model !== wg.name) throw corrupt(name, `holds model "${meta.model}", the live group is "${wg.name}"`);
      const have = meta.units.map((u) => u.name).sort();
      const live = [...wg.units.keys()].sort();
      if (have.join(",") !== live.join(",")) throw corrupt(name, `trainable units [${have}] in the checkpoint, [${live}] live`);
      await model.load(r);
      const t = await r.tensors("optimizers.safetensors");
      for (const u of meta.units) {
        const opt = wg.units.get(u.name)!.optimizer;
        for (const g of u.groups) {
          const mv = opt.state.moments.get(g);
          if (!mv) throw corrupt(name, `unit ${u.name} has no optimiser group ${g}`);
          copyInto(name, mv.m, t.get(`${u.name}/${g}.m`), `${u.name}/${g}.m`);
          copyInto(name, mv.v, t.get(`${u.name}/${g}.v`), `${u.name}/${g}.v`);
        }
        opt.state.step = u.step;
      }
      wg.updates = meta.updates;
      wg.weightVersions.bump("checkpoint-load");
    },
  };
}
