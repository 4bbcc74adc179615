// Parsing and checking manifest.json. The manifest is the commit record of a checkpoint: a
// directory without a valid one is partial. Never touches files other than by the paths given.
import { z } from "zod";
import { MasoError } from "../errors.js";
import type { CheckpointManifest } from "./types.js";

const manifestSchema = z
  .object({
    format: z.literal("maso-checkpoint"),
    version: z.literal(1),
    step: z.number().int().nonnegative(),
    createdAt: z.string(),
    parts: z.array(z.string()),
    files: z.record(z.string(), z.object({ bytes: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict()),
    meta: z.record(z.string(), z.unknown()),
  })
  .strict();

/** Parses manifest text; throws CHECKPOINT_CORRUPT naming `where` when it is not a valid manifest. */
export function parseManifest(text: string, where: string): CheckpointManifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new MasoError("CHECKPOINT_CORRUPT", `${where}: manifest.json is not JSON (${(e as Error).message})`, CORRUPT_HINT);
  }
  const r = manifestSchema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new MasoError("CHECKPOINT_CORRUPT", `${where}: manifest.json field '${i.path.join(".")}' is invalid: ${i.message}`, CORRUPT_HINT);
  }
  for (const rel of Object.keys(r.data.files)) {
    if (rel.startsWith("/") || rel.split("/").some((p) => p === ".." || p === "" || p === "."))
      throw new MasoError("CHECKPOINT_CORRUPT", `${where}: manifest lists an unsafe path ${JSON.stringify(rel)}`, CORRUPT_HINT);
  }
  return r.data as CheckpointManifest;
}

export const CORRUPT_HINT =
  "resume from an earlier checkpoint (fallback: true / --resume picks the newest good one) or delete this directory";
