// Ready-made checkpoint parts for the engine's state: a Decoder (base weights in HF layout, LoRA
// adapters in PEFT layout, value head, generator state), an AdamW optimiser (moments + step) and
// plain JSON state. They reuse src/engine/checkpoint formats; they never change training maths.
import { join } from "node:path";
import { loadHfModel, saveHfModel } from "../engine/io/hf-model.js";
import { loadAdapter, saveAdapter } from "../engine/io/peft.js";
import type { Decoder } from "../engine/model/decoder.js";
import type { AdamW } from "../engine/optim/adamw.js";
import { MasoError } from "../errors.js";
import type { Checkpointable } from "./types.js";

interface DecoderMeta {
  config: unknown;
  adapters: { name: string; lora: unknown }[];
  valueHead: { hidden: number; detach: boolean } | null;
  rngState: number;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function copyInto(dst: Float32Array, src: Float32Array, what: string): void {
  if (dst.length !== src.length)
    throw new MasoError(
      "CHECKPOINT_SHAPE",
      `${what}: checkpoint has ${src.length} values, the live model ${dst.length}`,
      "resume with the same model configuration",
    );
  dst.set(src);
}

/**
 * A Decoder as a checkpoint part: `hf/` (config.json + model.safetensors), `adapters/<name>/`
 * (PEFT), `value_head.safetensors` and `model.json` (config, adapter list, generator state).
 * Loading copies into the live model, whose config, adapters and value head must match.
 * The generator state is recorded; read it with {@link readDecoderRngState} to rebuild the model.
 * @example
 * await writeCheckpoint(runDir, step, [decoderPart("model", model)]);
 */
export function decoderPart(name: string, model: Decoder): Checkpointable {
  return {
    name,
    async save(w) {
      await saveHfModel(join(w.dir, "hf"), model.config, model.params);
      const adapters: DecoderMeta["adapters"] = [];
      for (const [an, a] of model.adapters) {
        await saveAdapter(join(w.dir, "adapters", an), model.config, a.lora, a.params);
        adapters.push({ name: an, lora: a.lora });
      }
      const vh = model.valueHead;
      if (vh)
        await w.tensors(
          "value_head.safetensors",
          vh.params.specs.map((s) => ({ name: s.name, shape: s.shape, data: vh.params.get(s.name) })),
        );
      const meta: DecoderMeta = {
        config: model.config,
        adapters,
        valueHead: vh ? { hidden: vh.hidden, detach: vh.detach } : null,
        rngState: model.rng.state(),
      };
      await w.json("model.json", meta);
    },
    async load(r) {
      const meta = (await r.json("model.json")) as DecoderMeta;
      if (!same(meta.config, model.config))
        throw new MasoError(
          "CHECKPOINT_MODEL_MISMATCH",
          `part '${name}': the checkpoint's model config differs from the live model's`,
          "resume with the same model settings",
        );
      const { params } = await loadHfModel(join(r.dir, "hf"));
      for (const s of model.params.specs) copyInto(model.params.get(s.name), params.get(s.name), `${name}/${s.name}`);
      const names = [...model.adapters.keys()].sort();
      if (!same(names, meta.adapters.map((a) => a.name).sort()))
        throw new MasoError(
          "CHECKPOINT_MODEL_MISMATCH",
          `part '${name}': adapters [${meta.adapters.map((a) => a.name)}] in the checkpoint, [${names}] on the model`,
        );
      for (const a of meta.adapters) {
        const live = model.adapters.get(a.name)!;
        const loaded = await loadAdapter(join(r.dir, "adapters", a.name), model.config);
        copyInto(live.params.data, loaded.params.data, `${name}/adapter ${a.name}`);
      }
      if ((meta.valueHead === null) !== (model.valueHead === null))
        throw new MasoError(
          "CHECKPOINT_MODEL_MISMATCH",
          `part '${name}': value head ${meta.valueHead ? "in the checkpoint but not on the model" : "on the model but not in the checkpoint"}`,
        );
      if (model.valueHead) {
        const t = await r.tensors("value_head.safetensors");
        for (const s of model.valueHead.params.specs)
          copyInto(model.valueHead.params.get(s.name), t.get(s.name) ?? new Float32Array(), `${name}/${s.name}`);
      }
      model.weightsWritten();
    },
  };
}

/** The Decoder generator state recorded by {@link decoderPart}; pass it as `seed` to rebuild the model. */
export async function readDecoderRngState(reader: { json(file: string): Promise<unknown> }): Promise<number> {
  const meta = (await reader.json("model.json")) as DecoderMeta;
  return meta.rngState;
}

/**
 * An AdamW optimiser as a checkpoint part: `moments.safetensors` (m and v per group) and
 * `state.json` (step, group names). Loading overwrites the live optimiser's moments and step.
 * @example
 * const parts = [decoderPart("model", model), adamwPart("optimizer", opt)];
 */
export function adamwPart(name: string, opt: AdamW): Checkpointable {
  return {
    name,
    async save(w) {
      const tensors = [...opt.state.moments].flatMap(([g, mv]) => [
        { name: `${g}.m`, shape: [mv.m.length], data: mv.m },
        { name: `${g}.v`, shape: [mv.v.length], data: mv.v },
      ]);
      await w.tensors("moments.safetensors", tensors);
      await w.json("state.json", { step: opt.state.step, groups: [...opt.state.moments.keys()] });
    },
    async load(r) {
      const st = (await r.json("state.json")) as { step: number; groups: string[] };
      const live = [...opt.state.moments.keys()];
      if (!same([...st.groups].sort(), [...live].sort()))
        throw new MasoError(
          "CHECKPOINT_MODEL_MISMATCH",
          `part '${name}': optimiser groups [${st.groups}] in the checkpoint, [${live}] live`,
        );
      const t = await r.tensors("moments.safetensors");
      for (const [g, mv] of opt.state.moments) {
        copyInto(mv.m, t.get(`${g}.m`) ?? new Float32Array(), `${name}/${g}.m`);
        copyInto(mv.v, t.get(`${g}.v`) ?? new Float32Array(), `${name}/${g}.v`);
      }
      opt.state.step = st.step;
    },
  };
}

/**
 * Plain JSON state (step counters, generator states, data cursors) as a checkpoint part.
 * @example
 * jsonPart("trainer", () => ({ step, rng: rng.state() }), (v) => { ... })
 */
export function jsonPart(name: string, get: () => unknown, set: (value: unknown) => void | Promise<void>): Checkpointable {
  return {
    name,
    save: (w) => w.json("state.json", get()),
    load: async (r) => set(await r.json("state.json")),
  };
}
