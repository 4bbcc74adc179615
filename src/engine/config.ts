// The decoder architecture maso's engine runs: one config type covering HF's LlamaForCausalLM,
// Qwen2ForCausalLM and Qwen3ForCausalLM. Field names are ours; hf-config.ts maps HF's config.json.

export type Architecture = "llama" | "qwen2" | "qwen3";

export interface ModelConfig {
  architecture: Architecture;
  /** V: vocabulary rows of the embedding and LM head. */
  vocabSize: number;
  /** C: residual width; cost grows with C^2 per token. */
  hiddenSize: number;
  /** F: SwiGLU inner width; the MLP holds ~3*C*F of each layer's parameters. */
  intermediateSize: number;
  /** L: decoder blocks. */
  numLayers: number;
  /** NH: query heads. */
  numHeads: number;
  /** KVH: key/value heads (grouped-query attention when < NH); fewer heads = smaller KV cache. */
  numKvHeads: number;
  /** HS: per-head width; Qwen3 sets it explicitly, otherwise C / NH. */
  headDim: number;
  /** RoPE base; larger bases suit longer contexts. */
  ropeTheta: number;
  rmsNormEps: number;
  /** LM head shares the embedding matrix (saves V*C parameters). */
  tieWordEmbeddings: boolean;
  /** Bias on q/k/v projections (Qwen2 always; Llama when attention_bias). */
  qkvBias: boolean;
  /** Bias on the output projection (Llama attention_bias only). */
  oBias: boolean;
  /** RMSNorm over each head of q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  /** Longest context the model accepts (positions are checked against it). */
  maxPositionEmbeddings: number;
  bosTokenId?: number;
  eosTokenIds?: number[];
}

/** Projections that can carry a LoRA adapter, by their HF module name. */
export const LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

export interface LoraConfig {
  /** R: adapter rank; more capacity, more memory and compute. */
  rank: number;
  /** Scaling numerator: the update is (alpha / rank) * B A. */
  alpha: number;
  targets: LoraTarget[];
}
