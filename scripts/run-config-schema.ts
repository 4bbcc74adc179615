// Writes schema/run-config.schema.json, the JSON Schema of a run config for YAML and JSON editors,
// from the zod schema `maso train` validates with. Run it after changing src/config/run-config.ts;
// test/layout/run-config-schema.test.ts fails while the committed file is stale.
//
//   npx tsx scripts/run-config-schema.ts
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runConfigJsonSchema } from "../src/config/define-config.js";
import { runIfMain } from "./lib/script-main.js";

export const SCHEMA_FILE = join(import.meta.dirname, "..", "schema", "run-config.schema.json");

/** The file's exact text: the schema, two-space indented, with a final newline. */
export const schemaText = (): string => `${JSON.stringify(runConfigJsonSchema(), null, 2)}\n`;

runIfMain(import.meta.url, "run-config-schema", async () => {
  writeFileSync(SCHEMA_FILE, schemaText());
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
  return 0;
});
