// Reading what a training run wrote, for tests that compare runs: JSONL files, the metrics that must
// match exactly (wall-clock fields aside) and trajectories without process-local fields. Test code only.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readMetrics } from "../../src/progress/metrics-writer.js";

/** A fresh run directory (not yet created) under a new temp folder. */
export const freshRunDir = (prefix: string): string => join(mkdtempSync(join(tmpdir(), prefix)), "run");

/** Every line of a JSONL file, parsed. */
export const jsonl = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

/** The numbers that must match exactly: everything but wall-clock fields. */
export const exactMetrics = (runDir: string) => readMetrics(runDir).map(({ time: _t, timings: _timings, ...rest }) => rest);

/** Trajectories without wall-clock fields and sample handles (process-local cache ids). */
export const runTrajectories = (runDir: string) =>
  readdirSync(join(runDir, "trajectories"))
    .sort()
    .map((f) =>
      readFileSync(join(runDir, "trajectories", f), "utf8")
        .replace(/"(durationMs|ms)":[^,}]+/g, "")
        .replace(/"sampleHandle":\{[^}]*\}/g, ""),
    );
