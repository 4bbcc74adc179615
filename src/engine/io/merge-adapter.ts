// Folds a LoRA adapter into plain weights, W + (alpha / rank) B A, for exports that carry one
// model without adapters (HF folders, GGUF). It reads the live model and returns new arrays.
import { MasoError } from "../../errors.js";
import type { LoraTarget } from "../config.js";
import type { Decoder } from "../model/decoder.js";
import { moduleOf, type ParamTable, projectionShape } from "../params.js";

/** The projection matrix (out, in) of layer `l`, with the adapter's (alpha / rank) B A added when one is given. */
export function mergedWeight(model: Decoder, l: number, proj: LoraTarget, adapterName: string | undefined): Float32Array {
  const base = model.lw[l].w[proj];
  const a = adapterName === undefined ? undefined : model.adapters.get(adapterName);
  const lw = a?.layers[l][proj];
  if (!a || !lw) return base;
  const { inDim, outDim } = projectionShape(model.config, proj);
  const R = a.lora.rank;
  const out = base.slice();
  for (let o = 0; o < outDim; o++) {
    const row = out.subarray(o * inDim, (o + 1) * inDim);
    for (let r = 0; r < R; r++) {
      const b = a.scale * lw.B[o * R + r];
      if (b === 0) continue;
      const ar = lw.A.subarray(r * inDim, (r + 1) * inDim);
      for (let i = 0; i < inDim; i++) row[i] += b * ar[i];
    }
  }
  return out;
}

/**
 * A copy of the model's parameter table (HF names) with adapter `adapterName` merged into every
 * projection it targets.
 * @example
 * await saveHfModel(dir, model.config, mergedParams(model, "planner"));
 */
export function mergedParams(model: Decoder, adapterName: string): ParamTable {
  const a = model.adapters.get(adapterName);
  if (!a) throw new MasoError("MERGE_NO_ADAPTER", `adapter '${adapterName}' does not exist on this model`);
  const out = model.params.zerosLike();
  out.data.set(model.params.data);
  for (let l = 0; l < model.config.numLayers; l++) {
    for (const proj of a.lora.targets) {
      out.get(`model.layers.${l}.${moduleOf(proj)}.${proj}.weight`).set(mergedWeight(model, l, proj, adapterName));
    }
  }
  return out;
}
