// The configuration of `maso pretrain` / `maso sft` runs of the engine's own byte-level models:
// model preset, data source, optimisation and checkpointing. zod schema (strict) with defaults;
// resolving it into engine types lives in src/cli/commands/pretrain.ts.
import { z } from "zod";
import { configError, toConfigIssues } from "./issues.js";
import { PRESET_NAMES } from "./model-presets.js";

// Upper bounds too, so a typo fails here, naming the field, rather than deep inside a run.
const posInt = (max: number) => z.number().int().min(1).max(max);
const MAX_STEPS = 10_000_000;

export const pretrainConfigSchema = z
  .object({
    kind: z.literal("pretrain").default("pretrain"),
    runDir: z.string().min(1).default("runs/pretrain"),
    seed: z.number().int().min(0).max(0xffffffff).default(0),
    preset: z.enum(PRESET_NAMES as [string, ...string[]]).default("tiny"),
    data: z
      .object({
        /** "world": maso's synthetic world corpus; "file": a .txt (documents split by blank lines) or .jsonl ({"text": …} per line) */
        source: z.enum(["world", "file"]).default("world"),
        path: z.string().min(1).optional(),
        /** sha256 of the file, recorded at the start so a resume can refuse changed data */
        sha256: z.string().optional(),
        worldSeed: z.number().int().min(0).max(0xffffffff).default(0),
        /** every n-th document goes to the held-out set (0: none) */
        heldOutEvery: z.number().int().min(0).max(1_000_000).default(20),
        /** use at most this many documents (null: all) */
        maxDocuments: posInt(1_000_000_000).nullable().default(null),
      })
      .strict()
      .superRefine((d, ctx) => {
        if (d.source === "file" && !d.path) ctx.addIssue({ code: "custom", path: ["path"], message: "a file path (data.source is file)" });
      })
      .default({ source: "world", worldSeed: 0, heldOutEvery: 20, maxDocuments: null }),
    steps: posInt(MAX_STEPS).default(200),
    batchSize: posInt(65_536).default(8),
    seqLen: z.number().int().min(2).max(1_000_000).default(64),
    lr: z.number().positive().max(1).default(3e-3),
    schedule: z.enum(["constant", "cosine"]).default("cosine"),
    warmupSteps: z.number().int().min(0).max(MAX_STEPS).default(10),
    minLr: z.number().min(0).max(1).default(3e-4),
    weightDecay: z.number().min(0).max(1).default(0.01),
    maxGradNorm: z.number().positive().max(10_000).default(1),
    /** held-out loss every this many steps and at the end (0: only at the end) */
    evalEvery: z.number().int().min(0).max(MAX_STEPS).default(50),
    checkpoint: z
      .object({ every: posInt(MAX_STEPS).default(50), keep: posInt(10_000).default(3) })
      .strict()
      .default({ every: 50, keep: 3 }),
  })
  .strict();

export type PretrainConfigInput = z.input<typeof pretrainConfigSchema>;
export type PretrainConfig = z.output<typeof pretrainConfigSchema>;

/**
 * Validates a pretraining config and applies defaults. Errors: CONFIG_INVALID with every issue.
 * @example
 * const cfg = resolvePretrainConfig({ preset: "tiny", steps: 50 });
 */
export function resolvePretrainConfig(input: unknown, source = "pretrain config"): PretrainConfig {
  const r = pretrainConfigSchema.safeParse(input);
  if (!r.success)
    throw configError("CONFIG_INVALID", `${source}: invalid config`, toConfigIssues(r.error.issues, input, pretrainConfigSchema));
  return r.data;
}
