// Named sizes of the engine's own byte-level decoders, for `models.<name>.preset` and
// `maso pretrain --preset`. Data only; building the model is the engine's job.
import type { ModelConfig } from "../engine/config.js";
import { BYTE_VOCAB_SIZE } from "../engine/tokenizer/byte-tokenizer.js";

const base = {
  architecture: "llama",
  vocabSize: BYTE_VOCAB_SIZE,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  qkvBias: false,
  oBias: false,
  qkNorm: false,
} as const;

/** Preset name -> model config (byte tokenizer vocabulary; eos ids are filled in from the tokenizer). */
export const MODEL_PRESETS = {
  /** d=64, 2 layers (~0.1M parameters): tests and smoke runs, a few ms per step. */
  tiny: {
    ...base,
    hiddenSize: 64,
    intermediateSize: 128,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 16,
    maxPositionEmbeddings: 512,
  },
  /** d=192, 4 layers (~1.3M): the README demo; learns the synthetic world in minutes on 2 cores. */
  small: {
    ...base,
    hiddenSize: 192,
    intermediateSize: 512,
    numLayers: 4,
    numHeads: 6,
    numKvHeads: 2,
    headDim: 32,
    maxPositionEmbeddings: 512,
  },
  /** d=384, 6 layers (~9M): slower, for longer runs. */
  base: {
    ...base,
    hiddenSize: 384,
    intermediateSize: 1024,
    numLayers: 6,
    numHeads: 6,
    numKvHeads: 2,
    headDim: 64,
    maxPositionEmbeddings: 1024,
  },
} satisfies Record<string, Omit<ModelConfig, "eosTokenIds">>;

export type ModelPreset = keyof typeof MODEL_PRESETS;
export const PRESET_NAMES = Object.keys(MODEL_PRESETS) as ModelPreset[];

/**
 * The model config of a preset with the given end-of-sequence ids.
 * @example
 * const cfg = presetConfig("tiny", createByteTokenizer().eosTokenIds);
 */
export function presetConfig(name: ModelPreset, eosTokenIds: readonly number[]): ModelConfig {
  return { ...MODEL_PRESETS[name], eosTokenIds: [...eosTokenIds] };
}
