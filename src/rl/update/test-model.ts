// The one-layer model the update's unit tests train: small enough that a test runs in milliseconds.
// Test code only (dist/ leaves test-* files out).
import type { ModelConfig } from "../../engine/config.js";

export const TINY_UPDATE_MODEL: ModelConfig = {
  architecture: "llama",
  vocabSize: 40,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 8,
  ropeTheta: 10000,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  qkvBias: false,
  oBias: false,
  qkNorm: false,
  maxPositionEmbeddings: 32,
};
