// Tiny random decoders for the generation tests: each architecture variant (GQA, q/k/v bias, q/k
// norm, tied head), weights scaled up so next-token distributions are peaked (no argmax near-ties),
// and LoRA adapters with non-zero B so an adapter really changes the output. Test helper only.
import type { Architecture, LoraTarget, ModelConfig } from "../../src/engine/config.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";

/** A small config of the given architecture; vocab 300 exceeds the byte tokenizer's 264 ids. */
export function tinyConfig(architecture: Architecture, over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    architecture,
    vocabSize: 300,
    hiddenSize: 64,
    intermediateSize: 96,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: architecture === "llama" ? 4 : 2,
    headDim: 16,
    ropeTheta: 10000,
    rmsNormEps: 1e-6,
    tieWordEmbeddings: architecture === "qwen3",
    qkvBias: architecture === "qwen2",
    oBias: false,
    qkNorm: architecture === "qwen3",
    maxPositionEmbeddings: 256,
    ...over,
  };
}

/** A decoder with peaked random weights; biases and norms random too so every parameter matters. */
export function tinyModel(architecture: Architecture, seed = 1, over: Partial<ModelConfig> = {}): Decoder {
  const model = new Decoder(tinyConfig(architecture, over), undefined, { seed, trainBase: false });
  const rng = createRng(seed + 1000);
  for (const s of model.params.specs) {
    const v = model.params.get(s.name);
    if (s.shape.length === 2) fillNormal(v, rng, s.name.includes("embed") || s.name.includes("lm_head") ? 0.5 : 0.3);
    else if (s.name.endsWith("bias")) fillNormal(v, rng, 0.1);
    else for (let i = 0; i < v.length; i++) v[i] = 1 + 0.2 * (rng.next() - 0.5);
  }
  return model;
}

/** Adds a LoRA adapter whose B is random (PEFT init leaves B = 0, i.e. no effect). */
export function addRandomAdapter(model: Decoder, name: string, seed: number, targets?: LoraTarget[]): void {
  const a = model.addAdapter(name, { rank: 4, alpha: 8, targets: targets ?? ["q_proj", "v_proj", "o_proj", "down_proj"] });
  const rng = createRng(seed);
  for (const s of a.params.specs) if (s.name.includes("lora_B")) fillNormal(a.params.get(s.name), rng, 0.1);
}
