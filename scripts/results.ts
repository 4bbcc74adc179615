// The results harness: for a workflow module (and optionally one of its `configs` variants), for
// each seed, evaluates the untrained cast on tasks.test (before RL), trains with `maso train`
// (checkpoint selection on dev), evaluates the best-on-dev checkpoint on tasks.test (after RL);
// then writes <out>/<workflow>/<variant>/summary.json and the training-curve SVGs. Drives the CLI
// in-process, so the numbers are exactly what `maso eval` prints. A rerun reuses finished seeds and
// resumes unfinished runs; --reevaluate redoes only the test evaluations of finished seeds (after the
// test split changed), keeping their training figures. The untrained cast does not depend on the seed
// (LoRA adapters start with B = 0), so its evaluation is cached by config under <out>/before-cache.
// Neither cache sees code or checkpoint files: after changing those, use a fresh --out.
//   npx tsx scripts/results.ts <workflow file> [--variant v] [--seeds 0,1,2] [--steps n] [--eval-every n] [--precision p] [--out results] [--reevaluate]
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { loadExports } from "../src/cli/commands/train.js";
import type { CliIo } from "../src/cli/commands/types.js";
import { main as maso } from "../src/cli/main.js";
import { withPrecision } from "../src/cli/precision-flag.js";
import { trainingModule } from "../src/cli/train/workflow-module.js";
import { isPrecisionSetting, type PrecisionSetting } from "../src/engine/precision.js";
import { writeFileAtomic } from "../src/fs/atomic-file.js";
import { MasoError } from "../src/errors.js";
import { compareEpisodes, comparisonReport, type EpisodeComparison } from "../src/run/compare-episodes.js";
import { readEvalEpisodes } from "../src/run/eval-episodes.js";
import { plotFigures } from "./lib/plots.js";
import { meanRecords, type SeedResult, summarize } from "./lib/results-summary.js";
import { readRunRows } from "./lib/run-series.js";
import { parseScriptArgs, runIfMain, usage } from "./lib/script-main.js";

const HELP =
  "usage: npx tsx scripts/results.ts <workflow file> [--variant <name>] [--seeds 0,1,2] [--steps <n>] [--eval-every <n>] [--precision auto|fp32|bf16] [--out <dir>] [--reevaluate]";
const OPTIONS = {
  precision: { type: "string" },
  variant: { type: "string" },
  seeds: { type: "string" },
  steps: { type: "string" },
  "eval-every": { type: "string" },
  out: { type: "string" },
  reevaluate: { type: "boolean" },
} as const;

export interface ResultsOptions {
  file: string;
  /** a key of the module's `configs` export; default its `config` export ("default") */
  variant?: string;
  seeds: number[];
  /** overrides schedule.steps */
  steps?: number;
  /** overrides eval.every (dev evaluations, hence checkpoint-selection points) */
  evalEvery?: number;
  /** overrides every model's precision (the committed figures were measured in fp32) */
  precision?: PrecisionSetting;
  out: string;
  /** finished seeds: redo the before/after test evaluations, keep the training figures */
  reevaluate?: boolean;
  /** progress and CLI output (default stderr) */
  log?: (s: string) => void;
}

/** Runs `maso <argv>` in-process; resolves to its stdout (also echoed to `log` when `echo`), throws RESULTS_STEP on a non-zero exit. */
async function cli(argv: string[], log: (s: string) => void, echo = false): Promise<string> {
  let out = "";
  const write = (s: string) => {
    out += s;
    if (echo) log(s);
  };
  const io: CliIo = { out: { write, isTTY: false }, err: { write: (s: string) => log(s) }, env: process.env };
  const code = await maso(argv, io);
  if (code !== 0) throw new MasoError("RESULTS_STEP", `'maso ${argv.join(" ")}' exited with ${code}\n${out}`, "see the error above");
  return out;
}

interface EvalJson {
  checkpoint: string;
  step: number;
  episodes: number;
  metric: number;
  episodeMetrics: Record<string, number>;
}
/** The after-RL test episodes of a seed, in its directory (the before ones are in the cache). */
const AFTER_EPISODES = "test-after.episodes.jsonl";
const lastJson = (out: string): EvalJson => JSON.parse(out.trim().split("\n").at(-1) ?? "") as EvalJson;

/**
 * `maso eval <target…> --split test --json --episodes <file>`: a module with --config (untrained
 * cast) or a run dir (its selected checkpoint); every episode is written to `episodes` for the paired comparison.
 */
const testEval = async (target: string[], episodes: string, log: (s: string) => void): Promise<EvalJson> =>
  lastJson(await cli(["eval", ...target, "--split", "test", "--json", "--episodes", episodes], log));

/** How a seed's comparison reads (`maso compare`'s words), for the demo. */
export { comparisonReport };

/** The paired comparison of two test evaluations on the same tasks (what `maso compare` computes). */
const compareEvals = async (before: string, after: string): Promise<EpisodeComparison> =>
  compareEpisodes((await readEvalEpisodes(before)).episodes, (await readEvalEpisodes(after)).episodes);

/** Writes a seed's result.json and logs its before → after. */
function saveResult(done: string, result: SeedResult, log: (s: string) => void): SeedResult {
  writeFileSync(done, `${JSON.stringify(result, null, 2)}\n`);
  log(`seed ${result.seed}: test ${result.before.toFixed(4)} -> ${result.after.toFixed(4)} (${result.selection} step ${result.step})\n`);
  if (result.comparison) log(`seed ${result.seed}, test before -> after, task by task:\n${comparisonReport(result.comparison)}\n`);
  return result;
}

/** The run config of the variant, or a usage error naming the variants there are. */
export function pickConfig(exp: Record<string, unknown>, file: string, variant: string | undefined): Record<string, unknown> {
  const configs = (exp.configs ?? {}) as Record<string, unknown>;
  const cfg = variant === undefined ? exp.config : configs[variant];
  if (cfg === undefined || cfg === null || typeof cfg !== "object")
    throw usage(
      variant === undefined ? `${file} exports no 'config'` : `${file} has no config variant '${variant}'`,
      `variants: ${Object.keys(configs).join(", ") || "none (pass no --variant)"}`,
    );
  const text = JSON.stringify(cfg, (k, v) => {
    if (typeof v === "function") throw new MasoError("CONFIG_NOT_JSON", `${file}: config field '${k}' is a function`, "use plain data");
    return v;
  });
  return JSON.parse(text) as Record<string, unknown>;
}

/** The content of every weights file the config's models name, so a model rebuilt in place is not a cache hit. */
export function weightsDigest(models: unknown): string {
  const h = createHash("sha256");
  for (const m of Object.values((models ?? {}) as Record<string, { weights?: unknown }>)) {
    const file = typeof m?.weights === "string" ? join(m.weights, "model.safetensors") : "";
    if (file && existsSync(file)) h.update(readFileSync(file));
  }
  return h.digest("hex");
}

/**
 * The untrained cast's test evaluation, cached under <out>/before-cache by everything in the config
 * that can shape it (seed, name, schedule, eval and checkpoint cannot), the models' weights and the
 * test tasks' ids. Role code (prompts, token budgets) is not in the key: delete the cache after
 * changing it.
 */
async function beforeEval(
  o: ResultsOptions,
  cfgFile: string,
  testIds: string,
  log: (s: string) => void,
): Promise<EvalJson & { episodesFile: string }> {
  const { seed, name, schedule, eval: _e, checkpoint, ...shaping } = JSON.parse(readFileSync(cfgFile, "utf8")) as Record<string, unknown>;
  const key = createHash("sha256")
    .update(JSON.stringify({ file: o.file, shaping, testIds, weights: weightsDigest(shaping.models) }))
    .digest("hex")
    .slice(0, 16);
  const cached = join(o.out, "before-cache", `${key}.json`);
  const episodes = join(o.out, "before-cache", `${key}.episodes.jsonl`);
  if (existsSync(cached) && existsSync(episodes)) {
    log(`before RL: reusing ${cached}\n`);
    return { ...(JSON.parse(readFileSync(cached, "utf8")) as EvalJson), episodesFile: episodes };
  }
  mkdirSync(join(o.out, "before-cache"), { recursive: true });
  // `maso eval` writes the episodes file atomically, and the result after it: a reader never sees half a pair
  const result = await testEval([o.file, "--config", cfgFile], episodes, log);
  await writeFileAtomic(cached, `${JSON.stringify(result, null, 2)}\n`);
  return { ...result, episodesFile: episodes };
}

/** A finished seed evaluated again on the current test split; its training figures stay. */
async function reevaluateSeed(o: ResultsOptions, dir: string, testIds: string, log: (s: string) => void): Promise<SeedResult> {
  const done = join(dir, "result.json");
  const old = JSON.parse(readFileSync(done, "utf8")) as SeedResult;
  log(`seed ${old.seed}: re-evaluating on the current test split\n`);
  const before = await beforeEval(o, join(dir, "config.json"), testIds, log);
  const after = await testEval([join(dir, "run")], join(dir, AFTER_EPISODES), log);
  const comparison = await compareEvals(before.episodesFile, join(dir, AFTER_EPISODES));
  if (after.step !== old.step) log(`warning: seed ${old.seed}: the selected checkpoint is now step ${after.step} (was ${old.step})\n`);
  const episodeMetrics = { ...old.episodeMetrics, testBefore: before.episodeMetrics, testAfter: after.episodeMetrics };
  return saveResult(
    done,
    {
      ...old,
      before: before.metric,
      after: after.metric,
      step: after.step,
      testEpisodes: after.episodes,
      reevaluated: true,
      comparison,
      episodeMetrics,
    },
    log,
  );
}

/** One seed: before-RL test eval, training (resumed when a previous attempt stopped), after-RL test eval. */
async function runSeed(
  o: ResultsOptions,
  base: Record<string, unknown>,
  seed: number,
  dir: string,
  testIds: string,
  log: (s: string) => void,
) {
  const done = join(dir, "result.json");
  if (existsSync(done)) {
    if (o.reevaluate) return reevaluateSeed(o, dir, testIds, log);
    log(`seed ${seed}: reusing ${done}\n`);
    return JSON.parse(readFileSync(done, "utf8")) as SeedResult;
  }
  mkdirSync(dir, { recursive: true });
  const cfgFile = join(dir, "config.json");
  const schedule = { ...(base.schedule as object), ...(o.steps !== undefined && { steps: o.steps }) };
  const evalCfg = { ...(base.eval as object), split: "dev", ...(o.evalEvery !== undefined && { every: o.evalEvery }) };
  writeFileSync(cfgFile, `${JSON.stringify({ ...base, seed, schedule, eval: evalCfg }, null, 2)}\n`);
  const runDir = join(dir, "run");

  log(`seed ${seed}: before RL (untrained cast, test split)\n`);
  const before = await beforeEval(o, cfgFile, testIds, log);
  log(`seed ${seed}: training into ${runDir}\n`);
  const t0 = performance.now();
  const resume = existsSync(join(runDir, "config.json"));
  await cli(resume ? ["train", "--resume", runDir, o.file] : ["train", o.file, "--config", cfgFile, "--run-dir", runDir], log, true);
  const trainSeconds = (performance.now() - t0) / 1000;
  log(`seed ${seed}: after RL (selected checkpoint, test split)\n`);
  const after = await testEval([runDir], join(dir, AFTER_EPISODES), log);
  const comparison = await compareEvals(before.episodesFile, join(dir, AFTER_EPISODES));
  const rows = readRunRows(runDir);
  return saveResult(
    done,
    {
      seed,
      before: before.metric,
      after: after.metric,
      selection: after.checkpoint === "best" ? "best" : "latest",
      step: after.step,
      testEpisodes: after.episodes,
      trainSeconds,
      resumed: resume,
      comparison,
      episodeMetrics: {
        train: meanRecords(rows.map((r) => (r.episodes as { metrics?: Record<string, number> } | undefined)?.metrics ?? {})),
        testBefore: before.episodeMetrics,
        testAfter: after.episodeMetrics,
      },
    },
    log,
  );
}

/**
 * Runs every seed and writes summary.json and the curves; returns the summary's path.
 * @example
 * await runResults({ file: "examples/workflows/marft-math/workflow.ts", variant: "actionLevel", seeds: [0, 1, 2], out: "results" });
 */
export async function runResults(o: ResultsOptions): Promise<string> {
  const log = o.log ?? ((s: string) => process.stderr.write(s));
  const exp = await loadExports(o.file);
  const mod = trainingModule(exp, o.file);
  if (!mod.tasks.test?.length)
    throw new MasoError(
      "RESULTS_NO_TEST",
      `${o.file} exports no tasks.test`,
      "results are reported on the held-out test split: export tasks.test",
    );
  if (!mod.metric)
    throw new MasoError("EVAL_NO_METRIC", `${o.file} exports no 'metric'`, "export const metric = (trajectory, task) => score");
  if (mod.tasks.test.length < 300) log(`warning: ${o.file} has only ${mod.tasks.test.length} test tasks (published results use ≥ 300)\n`);
  if (!mod.tasks.dev?.length) log(`warning: ${o.file} has no tasks.dev; no checkpoint selection, the newest checkpoint is reported\n`);
  const base = withPrecision(pickConfig(exp, o.file, o.variant), o.precision) as Record<string, unknown>;
  const variant = o.variant ?? "default";
  const dir = join(o.out, mod.workflow.name, variant);
  const testIds = mod.tasks.test.map((t, i) => mod.taskId?.(t, i) ?? JSON.stringify(t)).join("\n");
  const perSeed: SeedResult[] = [];
  for (const seed of o.seeds) perSeed.push(await runSeed(o, base, seed, join(dir, `seed-${seed}`), testIds, log));

  const runs = o.seeds.map((s) => ({ label: `seed ${s}`, rows: readRunRows(join(dir, `seed-${s}`, "run")) }));
  const figs = plotFigures(runs, { mode: "band", title: `${mod.workflow.name} (${variant})` });
  for (const f of figs) writeFileSync(join(dir, f.file), f.svg);
  const steps = Math.max(...runs.map((r) => r.rows.at(-1)?.step ?? 0));
  const machine = { cores: availableParallelism(), threads: process.env.MASO_THREADS ?? null, node: process.version };
  const summary = summarize(
    { workflow: mod.workflow.name, variant, file: o.file, steps, machine, plots: figs.map((f) => f.file) },
    perSeed,
  );
  const path = join(dir, "summary.json");
  writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
  log(`wrote ${path}\n`);
  return path;
}

function ints(v: string | undefined, what: string): number[] | undefined {
  if (v === undefined) return undefined;
  const xs = v.split(",").map((s) => Number(s.trim()));
  if (xs.length === 0 || xs.some((x) => !Number.isSafeInteger(x) || x < 0))
    throw usage(`${what} must be non-negative integers, got '${v}'`, HELP);
  return xs;
}

export async function main(argv: string[]): Promise<number> {
  const a = parseScriptArgs(argv, OPTIONS, HELP);
  const file = a.positionals[0];
  if (!file || a.positionals.length > 1) throw usage("give exactly one workflow file", HELP);
  const steps = ints(a.values.steps, "--steps")?.[0];
  const evalEvery = ints(a.values["eval-every"], "--eval-every")?.[0];
  if (steps === 0) throw usage("--steps must be at least 1", HELP);
  const seeds = ints(a.values.seeds ?? "0,1,2", "--seeds")!;
  const reevaluate = a.values.reevaluate === true;
  const precision = a.values.precision;
  if (precision !== undefined && !isPrecisionSetting(precision))
    throw usage(`--precision must be auto, fp32 or bf16, got '${precision}'`, HELP);
  const out = a.values.out ?? "results";
  console.log(await runResults({ file, variant: a.values.variant, seeds, steps, evalEvery, precision, out, reevaluate }));
  return 0;
}

runIfMain(import.meta.url, "results", main);
