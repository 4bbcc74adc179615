// `maso/engine`: the model engine under the RL layer — decoder, LoRA, value head, optimiser,
// tokenizers, generation, model files, and the language-model training loops (pretraining, SFT).
// Re-exports only; docs/architecture.md ("Public API") says what each tier holds.
export { describeNative, defaultThreads } from "../native/binding.js";
export type { Architecture, LoraConfig, LoraTarget, ModelConfig } from "../engine/config.js";
export { LORA_TARGETS } from "../engine/config.js";
export { ParamTable, modelParamSpecs, loraParamSpecs, type ParamSpec } from "../engine/params.js";
export {
  Decoder,
  type BackwardGrads,
  type DecoderOptions,
  type ForwardOptions,
  type ForwardResult,
  type Tape,
} from "../engine/model/decoder.js";
export type { SequenceInput } from "../engine/model/batch.js";
export type { Adapter } from "../engine/model/lora.js";
export type { ValueHead } from "../engine/model/value-head.js";
export { createKeyedRng, createRng, type KeyedRng, type Rng, type SeededRng } from "../rng.js";
export { fillNormal } from "../engine/model/init.js";
export {
  createAdamW,
  globalGradNorm,
  type AdamW,
  type AdamWConfig,
  type ParamGroup,
  type StepReport as OptimizerStepReport,
} from "../engine/optim/adamw.js";
export { lrAt, type LrSchedule } from "../engine/optim/schedule.js";
export { lmStep, meanNll, type LmStepOptions, type LmStepResult } from "../engine/lm-step.js";

// model files: HF, PEFT, trainable state beyond them, GGUF export
export { loadHfModel, saveHfModel, type SaveHfOptions } from "../engine/io/hf-model.js";
export { loadAdapter, saveAdapter } from "../engine/io/peft.js";
export { loadOptimizerState, saveOptimizerState, loadValueHead, saveValueHead } from "../engine/io/training-state.js";
export { writeGguf, type GgufExportOptions } from "../engine/io/gguf.js";

// tokenizers
export type { ChatMessage, ChatTemplateOptions, DecodeOptions, EncodeOptions, Tokenizer } from "../engine/tokenizer/types.js";
export { encodeChat } from "../engine/tokenizer/encode-chat.js";
export { hfTokenizerFromFiles, loadHfTokenizer, qwen3TokenizerDir, type HfTokenizer } from "../engine/tokenizer/hf-tokenizer.js";
export { BYTE_VOCAB_SIZE, createByteTokenizer, type ByteTokenizer } from "../engine/tokenizer/byte-tokenizer.js";
export { loadTokenizer, saveTokenizer, type SavableTokenizer } from "../engine/tokenizer/load-tokenizer.js";
export { checkTokenizerFits } from "../engine/tokenizer/tokenizer-fit.js";
export { trainBpe, type BpeModel, type BpeTrainOptions } from "../engine/tokenizer/bpe-trainer.js";
export { saveBpeTokenizer, bpeTokenizerFiles } from "../engine/tokenizer/bpe-trainer-files.js";

// generation: KV-cache continuous batching
export {
  Sampler,
  sampleToken,
  samplingSupport,
  type SamplerOptions,
  type SamplerStats,
  type FinishReason,
  type GenerationRequest,
  type GenerationResult,
  type TopLogprob,
} from "../engine/generate/index.js";

// language-model training loops (what `maso pretrain` drives), and supervised fine-tuning
export { evalLoss, pretrain, tokenStream, type PretrainOptions, type PretrainStep } from "../run/pretrain.js";
export { sft, sftSequences, sftLoss, type SftExample, type SftOptions } from "../run/sft.js";
