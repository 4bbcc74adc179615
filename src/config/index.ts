// Configuration's public surface, listed explicitly for src/index.ts to re-export.
// Schemas are exported for tools (JSON Schema generation, editors); prefer the resolve functions.
export { type ConfigIssue, formatIssue, formatIssues } from "./issues.js";
export { MODEL_PRESETS, PRESET_NAMES, presetConfig, type ModelPreset } from "./model-presets.js";
export { runConfigSchema, ESTIMATORS, type RunConfig, type RunConfigInput } from "./run-config.js";
export { defineConfig, runConfigJsonSchema } from "./define-config.js";
export { resolveCast, type CastEntry } from "./cast.js";
export {
  CONFIG_FILE,
  loadRunConfig,
  readConfigFile,
  resolveRunConfig,
  runConfigIssues,
  writeEffectiveConfig,
  type ResolveOptions,
} from "./load-config.js";
export { pretrainConfigSchema, resolvePretrainConfig, type PretrainConfig, type PretrainConfigInput } from "./pretrain-config.js";
