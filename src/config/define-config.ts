// Editor help for run configs: `defineConfig` types a config written in code, and the JSON Schema
// (generated from the same zod schema the loader validates with) serves YAML and JSON editors.
import { z } from "zod";
import { type RunConfigInput, runConfigSchema } from "./run-config.js";

/**
 * Returns the run config unchanged, typed: editors complete field names and flag wrong values.
 * Defaults are applied (and everything validated) when `maso train` resolves it.
 * @example
 * export const config = defineConfig({ name: "math", models: { base: { preset: "tiny" } }, cast: { solver: "base" } });
 */
export function defineConfig(config: RunConfigInput): RunConfigInput {
  return config;
}

/**
 * The JSON Schema (draft 2020-12) of a run config file as written, i.e. before defaults.
 * scripts/run-config-schema.ts writes it to schema/run-config.schema.json.
 */
export function runConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(runConfigSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  return {
    $schema,
    title: "maso run config",
    description: "The config of a `maso train` run (docs/config.md). Generated from the zod schema; do not edit.",
    ...rest,
  };
}
