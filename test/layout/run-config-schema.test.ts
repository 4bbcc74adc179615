// schema/run-config.schema.json is what scripts/run-config-schema.ts generates from the zod schema,
// and it accepts and refuses what the loader does on a few telling fields.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SCHEMA_FILE, schemaText } from "../../scripts/run-config-schema.js";

describe("schema/run-config.schema.json", () => {
  it("is the committed output of scripts/run-config-schema.ts (run it after changing the config schema)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(schemaText());
  });
  it("describes the config's sections, enums and defaults", () => {
    const s = JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as {
      type: string;
      required: string[];
      properties: Record<string, { properties?: Record<string, { enum?: string[]; default?: unknown }> }>;
    };
    expect(s.type).toBe("object");
    expect(s.required).toEqual(expect.arrayContaining(["models", "cast"]));
    for (const k of ["models", "cast", "algorithm", "schedule", "sampling", "rewardWeights", "eval", "checkpoint"])
      expect(s.properties).toHaveProperty(k);
    expect(s.properties.algorithm.properties?.estimator.enum).toEqual(expect.arrayContaining(["grpo", "rloo", "gae-action"]));
  });
});
