// The in-worker trainer's public surface: PPO-style updates over cached samples, scoring forwards
// and per-unit optimisers. Unlike the rest of src/rl it uses the engine; it never talks to a controller.
export { DEFAULT_TRAINER, resolveTrainerConfig, type TrainerOptions } from "./config.js";
export type { KlSettings, RoleUpdateMetrics, TrainerConfig, TrainSample, UpdateReport } from "./types.js";
export { forwardTemperature, responseInput, type LogprobInput, type LogprobOutput, forwardLogprobs } from "./forward-logprobs.js";
export { createUnits, policyUnitName, type TrainUnit } from "./units.js";
export { chunkLoss, type ChunkResult, type Denominators } from "./chunk-loss.js";
export { ppoUpdate, type UpdateWhat } from "./ppo-update.js";
