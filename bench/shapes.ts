// The model shapes the engine benchmarks use (training step and generation): tiny, small, two
// layers of Qwen2.5-0.5B, and the full Qwen2.5-0.5B and Qwen3-0.6B shapes (random weights). Data only.
import type { ModelConfig } from "../src/engine/config.js";

const common = { rmsNormEps: 1e-6, maxPositionEmbeddings: 4096, oBias: false, qkNorm: false, ropeTheta: 10000 } as const;

export type BenchShape = "tiny" | "small" | "qwen0.5b-layers" | "qwen2.5-0.5b" | "qwen3-0.6b";

const qwen25: ModelConfig = {
  ...common,
  architecture: "qwen2",
  vocabSize: 151936,
  hiddenSize: 896,
  intermediateSize: 4864,
  numLayers: 24,
  numHeads: 14,
  numKvHeads: 2,
  headDim: 64,
  ropeTheta: 1000000,
  tieWordEmbeddings: true,
  qkvBias: true,
};

export const BENCH_SHAPES: Record<BenchShape, ModelConfig> = {
  tiny: {
    ...common,
    architecture: "llama",
    vocabSize: 512,
    hiddenSize: 256,
    intermediateSize: 704,
    numLayers: 4,
    numHeads: 4,
    numKvHeads: 4,
    headDim: 64,
    tieWordEmbeddings: false,
    qkvBias: false,
  },
  small: {
    ...common,
    architecture: "llama",
    vocabSize: 4096,
    hiddenSize: 512,
    intermediateSize: 1408,
    numLayers: 8,
    numHeads: 8,
    numKvHeads: 2,
    headDim: 64,
    tieWordEmbeddings: false,
    qkvBias: false,
  },
  "qwen0.5b-layers": { ...qwen25, numLayers: 2 },
  "qwen2.5-0.5b": qwen25,
  "qwen3-0.6b": {
    ...common,
    architecture: "qwen3",
    vocabSize: 151936,
    hiddenSize: 1024,
    intermediateSize: 3072,
    numLayers: 28,
    numHeads: 16,
    numKvHeads: 8,
    headDim: 128,
    ropeTheta: 1000000,
    tieWordEmbeddings: true,
    qkvBias: false,
    qkNorm: true,
  },
};
