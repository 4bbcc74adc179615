// Named LoRA adapters over a frozen (or trainable) base: each adapter owns its A/B tensors,
// gradients and nothing else. The projection code in block.ts applies them per row segment, so
// one packed batch may mix sequences that use different adapters (or none).
import { MasoError } from "../../errors.js";
import { LORA_TARGETS, type LoraConfig, type LoraTarget, type ModelConfig } from "../config.js";
import { ParamTable, loraParamSpecs, loraTensorName } from "../params.js";
import type { Rng } from "../../rng.js";
import { fillNormal } from "./init.js";

export interface Adapter {
  name: string;
  lora: LoraConfig;
  params: ParamTable;
  grads: ParamTable;
  /** alpha / rank */
  scale: number;
  /** Fast lookup: layer -> target -> {A (R,in), B (out,R), dA, dB} */
  layers: Array<Partial<Record<LoraTarget, LoraWeights>>>;
}

export interface LoraWeights {
  A: Float32Array;
  B: Float32Array;
  dA: Float32Array;
  dB: Float32Array;
}

export function validateLora(lora: LoraConfig): void {
  if (!Number.isInteger(lora.rank) || lora.rank < 1)
    throw new MasoError("LORA_CONFIG", `LoRA rank must be a positive integer, got ${lora.rank}`);
  if (!(lora.alpha > 0)) throw new MasoError("LORA_CONFIG", `LoRA alpha must be > 0, got ${lora.alpha}`);
  if (lora.targets.length === 0) throw new MasoError("LORA_CONFIG", "LoRA needs at least one target projection");
  for (const t of lora.targets) {
    if (!LORA_TARGETS.includes(t)) {
      throw new MasoError("LORA_CONFIG", `unknown LoRA target '${t}'`, `use any of ${LORA_TARGETS.join(", ")}`);
    }
  }
}

/**
 * Builds an adapter. Without `params` it is initialised like PEFT: A ~ N(0, 1/in), B = 0, so the
 * adapted model starts exactly equal to the base.
 */
export function createAdapter(cfg: ModelConfig, name: string, lora: LoraConfig, rng: Rng, params?: ParamTable): Adapter {
  validateLora(lora);
  const specs = loraParamSpecs(cfg, lora);
  const table = params ?? new ParamTable(specs);
  if (!params) {
    for (const s of specs) if (s.name.includes("lora_A")) fillNormal(table.get(s.name), rng, 1 / Math.sqrt(s.shape[1]));
  }
  const grads = table.zerosLike();
  const layers: Adapter["layers"] = [];
  for (let l = 0; l < cfg.numLayers; l++) {
    const byTarget: Partial<Record<LoraTarget, LoraWeights>> = {};
    for (const t of lora.targets) {
      const a = loraTensorName(l, t, "A");
      const b = loraTensorName(l, t, "B");
      byTarget[t] = { A: table.get(a), B: table.get(b), dA: grads.get(a), dB: grads.get(b) };
    }
    layers.push(byTarget);
  }
  return { name, lora, params: table, grads, scale: lora.alpha / lora.rank, layers };
}
