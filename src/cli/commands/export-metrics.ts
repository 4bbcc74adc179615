// `maso export-metrics`: a run's metrics.jsonl as one wide CSV (a row per step, dotted column
// names) for W&B, MLflow or a spreadsheet, or as TensorBoard event files for a run that has none
// (`maso sft` writes metrics.jsonl only; `maso train` and `maso pretrain` write both).
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { MasoError } from "../../errors.js";
import { METRICS_FILE, readMetrics } from "../../progress/metrics-writer.js";
import { metricsCsv } from "../../progress/metrics-csv.js";
import { openEventFile, TENSORBOARD_DIR } from "../../progress/tensorboard-writer.js";
import { parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { type Command, println } from "./types.js";

export const exportMetricsCommand: Command = {
  name: "export-metrics",
  summary: "a run's metrics as one CSV (W&B, MLflow) or as TensorBoard event files",
  help: `usage: maso export-metrics <runDir> [--format csv|tensorboard] [--out <path>]

Reads <runDir>/metrics.jsonl.
  csv (default)   one row per step: step, time, then every numeric metric by its dotted path
                  (roles.planner.reward.total, …); an empty cell is a value that step did not log.
                  Written to --out, or to stdout without it.
  tensorboard     one event file in --out (default <runDir>/${TENSORBOARD_DIR}), replacing the
                  event files there; tags are the paths joined by "/".

options:
  --format <f>    csv or tensorboard
  --out <path>    the CSV file, or the event files' folder`,
  async run(argv, io) {
    const p = parseFlags("export-metrics", argv, { format: { type: "string" }, out: { type: "string" } }, 1);
    const runDir = p.positionals[0];
    if (!runDir) throw usageError("export-metrics: missing the run directory", "export-metrics");
    const format = str(p, "format") ?? "csv";
    if (format !== "csv" && format !== "tensorboard")
      throw usageError(`export-metrics: --format must be csv or tensorboard, got '${format}'`, "export-metrics");
    if (!existsSync(join(runDir, METRICS_FILE)))
      throw new MasoError("RUN_NOT_FOUND", `${join(runDir, METRICS_FILE)} does not exist`, "pass a directory a maso run wrote");
    const rows = readMetrics(runDir);
    const out = str(p, "out");
    if (format === "tensorboard") {
      const events = openEventFile(out ?? join(runDir, TENSORBOARD_DIR), { rows });
      println(io, `exported ${rows.length} steps -> ${events.file} (TensorBoard)`);
      return 0;
    }
    const csv = metricsCsv(rows);
    if (!out) {
      io.out.write(csv);
      return 0;
    }
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, csv);
    println(io, `exported ${rows.length} steps -> ${out} (CSV)`);
    return 0;
  },
};
