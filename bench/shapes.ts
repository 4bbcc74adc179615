// The model shapes both engine benchmarks use (training step and generation), named as in the
// issues: tiny, small, and the layer shape of Qwen2.5-0.5B. Data only.
import type { ModelConfig } from "../src/engine/config.js";

const common = { rmsNormEps: 1e-6, maxPositionEmbeddings: 4096, oBias: false, qkNorm: false, ropeTheta: 10000 } as const;

export const BENCH_SHAPES: Record<"tiny" | "small" | "qwen0.5b-layers", ModelConfig> = {
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
  "qwen0.5b-layers": {
    ...common,
    architecture: "qwen2",
    vocabSize: 151936,
    hiddenSize: 896,
    intermediateSize: 4864,
    numLayers: 2,
    numHeads: 14,
    numKvHeads: 2,
    headDim: 64,
    ropeTheta: 1000000,
    tieWordEmbeddings: true,
    qkvBias: true,
  },
};
