// `maso train <workflow file>`: loads the workflow module, validates the run config against the
// workflow's roles, writes the effective config and runs RL training with checkpoints; `--resume
// <runDir>` continues a killed run exactly; `--check` validates everything a run would, trains nothing.
import { join, resolve } from "node:path";
import { listCheckpoints } from "../../checkpoint/paths.js";
import {
  CONFIG_FILE,
  importModule,
  parseJsonConfig,
  readConfigFile,
  resolveRunConfig,
  writeEffectiveConfig,
} from "../../config/load-config.js";
import type { RunConfig } from "../../config/run-config.js";
import { agentModule, isAgentModule } from "../../gateway/agent-module.js";
import { agentWorkflowExports } from "../../gateway/agent-workflow.js";
import { gatewayEnvironment } from "../../gateway/host.js";
import { workflowRoles } from "../../workflow/graph-types.js";
import { MasoError } from "../../errors.js";
import { readRegularFile } from "../../fs/fs-util.js";
import type { RunLock } from "../../fs/run-lock.js";
import type { PipelineProgress } from "../../progress/format.js";
import { createProgress } from "../../progress/progress-display.js";
import { createNatsRuntime, envRunKey } from "../../distributed/nats-runtime.js";
import type { StepReport } from "../../runtime/controller/controller.js";
import { createRuntime } from "../../runtime/runtime.js";
import type { TrainRow } from "../../run/step-row.js";
import { runTraining } from "../../run/rl-run.js";
import { lockRun } from "../../run/run-dir.js";
import type { Workflow } from "../../workflow/graph-types.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { precisionFlag, withPrecision } from "../precision-flag.js";
import { checkTraining } from "../train/check-run.js";
import { runtimeFromConfig } from "../../run/runtime-options.js";
import { isWorkflow, moduleExports, scoredSplit, trainingModule } from "../train/workflow-module.js";
import { printEndOfRun } from "../train/end-of-run.js";
import { checkpointPauseHook } from "./pretrain.js";
import { type CliIo, type Command, println } from "./types.js";

const FLAGS = {
  config: { type: "string" },
  "run-dir": { type: "string" },
  steps: { type: "string" },
  resume: { type: "string" },
  check: { type: "boolean" },
  nats: { type: "string" },
  workers: { type: "string" },
  "run-id": { type: "string" },
  ranks: { type: "string" },
  precision: { type: "string" },
  "eval-test": { type: "boolean" },
} as const;

/**
 * `--nats`, `--workers`, `--run-id`, `--ranks` over the config's runtime section (allowed with
 * --resume: where workers run is not a training setting, and data-parallel ranks train alike).
 */
function withRuntimeFlags(raw: Record<string, unknown>, p: ReturnType<typeof parseFlags>): Record<string, unknown> {
  const url = str(p, "nats");
  const workers = str(p, "workers");
  const runId = str(p, "run-id");
  const ranks = num(p, "ranks", "train", { int: true, min: 1, max: 64 });
  if (url === undefined && workers === undefined && runId === undefined && ranks === undefined) return raw;
  if (workers !== undefined && workers !== "spawn" && workers !== "attach")
    throw usageError(`train: --workers must be spawn or attach, got '${workers}'`, "train");
  const rt = (raw.runtime ?? {}) as Record<string, unknown>;
  const nats = (rt.nats ?? {}) as Record<string, unknown>;
  return {
    ...raw,
    runtime: {
      ...rt,
      transport: "nats",
      nats: {
        ...nats,
        ...(url !== undefined && { url }),
        ...(workers !== undefined && { workers }),
        ...(runId !== undefined && { run: runId }),
        ...(ranks !== undefined && { ranks }),
      },
    },
  };
}

/** Role names of a compiled workflow (role and agent nodes), in node order. */
export { workflowRoles };

/** Imports a workflow module and checks that it exports a compiled workflow. */
export async function loadExports(file: string): Promise<Record<string, unknown>> {
  // agent code may build its SDK clients from the environment at import: point it at the gateway first
  const restoreEnvironment = await gatewayEnvironment();
  const mod = await importModule(file).catch((e: unknown) => {
    restoreEnvironment();
    if (e instanceof MasoError) throw e;
    throw new MasoError(
      "WORKFLOW_FILE",
      `cannot load workflow ${file}: ${(e as Error).message}`,
      "check the path and that the module runs",
    );
  });
  const raw = moduleExports(mod);
  if (!isAgentModule(raw)) restoreEnvironment();
  // an agent module (an SDK agent behind the gateway) trains as the one-node workflow it maps to
  const exp = isAgentModule(raw) ? agentWorkflowExports(agentModule(raw, file)) : raw;
  if (!isWorkflow(exp.workflow))
    throw new MasoError("WORKFLOW_FILE", `${file} exports no compiled workflow`, "export const workflow = workflow(...)...compile()");
  return exp;
}

/** A training run's saved config.json; RUN_NOT_FOUND when the directory has none. */
export async function savedConfig(runDir: string): Promise<Record<string, unknown>> {
  const path = join(runDir, CONFIG_FILE);
  let text: string;
  try {
    // a FIFO or device in its place is a named error, never a read that blocks
    text = await readRegularFile(path, "utf8");
  } catch (e) {
    if (e instanceof MasoError) throw e;
    throw new MasoError(
      "RUN_NOT_FOUND",
      `${runDir} is not a training run (no readable ${CONFIG_FILE})`,
      "pass the run directory a 'maso train' run created",
    );
  }
  return parseJsonConfig(text, path) as Record<string, unknown>;
}

/** The in-training evaluation from config.eval: split, size, greedy or sampled (needs `metric`); `onProgress` shows it. */
function evalOptions(
  config: RunConfig,
  mod: ReturnType<typeof trainingModule>,
  onProgress: (label: string, done: number, total: number) => void,
) {
  const tasks = mod.tasks[config.eval.split];
  if (config.eval.split === "test" && !tasks?.length)
    throw new MasoError(
      "CONFIG_EVAL_SPLIT",
      'eval.split is "test" but the workflow module exports no tasks.test',
      "export tasks.test, or evaluate on dev",
    );
  if (!mod.metric || !tasks?.length) return undefined;
  // checkpoint selection only ever looks at dev: selecting on test would leak it into the result
  const selectBest = config.eval.split === "dev";
  const label = `eval ${config.eval.split}`;
  return {
    every: config.eval.every,
    tasks,
    episodes: config.eval.episodes,
    metric: mod.metric,
    greedy: config.eval.greedy,
    selectBest,
    atStart: config.eval.atStart,
    split: config.eval.split,
    onProgress: (done: number, total: number) => onProgress(label, done, total),
  };
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const locks: RunLock[] = [];
  try {
    return await train(argv, io, locks);
  } finally {
    for (const l of locks) l.release();
  }
}

/** The workflow file, its exports and the raw config of a fresh run (flags applied) or of the run `--resume` names. */
async function runInput(
  p: ReturnType<typeof parseFlags>,
  resumeDir: string | undefined,
): Promise<{ file: string; exp: Record<string, unknown>; raw: unknown }> {
  let file: string = p.positionals[0] ?? "";
  if (resumeDir !== undefined) {
    const extra = ["config", "run-dir", "steps", "check", "precision"].filter((k) => p.values[k] !== undefined);
    if (extra.length)
      throw usageError(`train: --resume takes every setting from ${join(resumeDir, CONFIG_FILE)}; drop --${extra.join(", --")}`, "train");
    const saved = await savedConfig(resumeDir);
    file ||= typeof saved.workflow === "string" ? saved.workflow : "";
    if (!file) throw usageError(`train: ${join(resumeDir, CONFIG_FILE)} names no workflow; pass the workflow file`, "train");
    return { file, exp: await loadExports(file), raw: withRuntimeFlags({ ...saved, runDir: resumeDir }, p) };
  }
  if (!file) throw usageError("train: missing the workflow file", "train");
  const exp = await loadExports(file);
  const cfgPath = str(p, "config");
  const raw = cfgPath ? await readConfigFile(cfgPath) : exp.config;
  if (raw === undefined)
    throw new MasoError(
      "CONFIG_MISSING",
      `${file} exports no 'config' and no --config was given`,
      "pass --config <file> (see docs/config.md)",
    );
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new MasoError(
      "CONFIG_NOT_MAPPING",
      `${cfgPath ?? `${file}'s config export`} is ${raw === null ? "null" : Array.isArray(raw) ? "a list" : typeof raw}, not a config object`,
      "see docs/config.md",
    );
  const steps = num(p, "steps", "train", { int: true, min: 1 });
  const r = raw as Record<string, unknown>;
  const flagged = withPrecision(
    {
      ...r,
      ...(str(p, "run-dir") && { runDir: str(p, "run-dir") }),
      ...(steps !== undefined && { schedule: { ...(r.schedule as object), steps } }),
    },
    precisionFlag(p, "train"),
  ) as Record<string, unknown>;
  return { file, exp, raw: withRuntimeFlags(flagged, p) };
}

/** The row's pipeline for the progress line: its weights, and each group's `<op>Share` as `<op>`. */
function pipelineProgress(row: TrainRow): PipelineProgress {
  const groups = (row.timings.workers ?? {}) as Record<string, Record<string, number>>;
  const workers = Object.fromEntries(
    Object.entries(groups).map(([g, shares]) => [
      g,
      Object.fromEntries(Object.entries(shares).map(([k, v]) => [k.replace(/Share$/, ""), v])),
    ]),
  );
  return { weights: row.pipeline!.weights, ahead: row.pipeline!.ahead, workers };
}

/**
 * What each finished step prints: the progress line, each warning once while it holds, rollbacks
 * and failed episodes. `progress` is read at every step (a resume replaces it).
 */
function stepPrinter(progress: () => ReturnType<typeof createProgress>) {
  const warned = new Set<string>(); // warnings shown and still holding: said once, until they stop
  let footnoted = false;
  return <S>(row: TrainRow, report: StepReport<S>) => {
    const out = progress();
    out.update({
      step: row.step,
      episodes: row.episodes.count,
      tokens: row.tokens,
      values: { eval: row.eval?.metric },
      // roles whose records were all unrewarded this step have no reward to show
      roleRewards: Object.fromEntries(Object.entries(report.roles).flatMap(([r, m]) => (m.samples > 0 ? [[r, m.reward]] : []))),
      ...(row.pipeline && { pipeline: pipelineProgress(row) }),
    });
    const now = new Set<string>();
    for (const w of row.warnings ?? []) {
      const key = `${w.code}:${w.role ?? ""}`;
      now.add(key);
      if (warned.has(key)) continue;
      out.log(`warning: ${w.message}`);
      out.log(`  ${w.hint}`);
      if (!footnoted) out.log('  (said once while it holds; metrics.jsonl lists every step\'s under "warnings")');
      footnoted = true;
    }
    warned.clear();
    for (const k of now) warned.add(k);
    for (const b of row.rollback ?? [])
      out.log(
        `step ${row.step}: rolled ${b.roles.map((r) => `"${r}"`).join(", ")} (${b.model} ${b.unit}) back to checkpoint step ${b.step}${b.checkpoint === "best" ? " (best on dev)" : ""}`,
      );
    const first = report.rewards.failures[0];
    if (first)
      out.log(
        `step ${row.step}: ${row.episodes.failed} of ${row.episodes.count} episodes failed and trained on nothing (first: ${first.episodeId} ${first.code}: ${first.message})`,
      );
  };
}

/** The command; a run-directory lock it takes goes into `locks`, which `run` releases when it ends. */
async function train(argv: readonly string[], io: CliIo, locks: RunLock[]): Promise<number> {
  const p = parseFlags("train", argv, FLAGS, 1);
  const resumeDir = str(p, "resume");
  const { file, exp, raw } = await runInput(p, resumeDir);
  const wf = exp.workflow as Workflow<object, string>;
  const roles = workflowRoles(wf);
  const source = resumeDir !== undefined ? join(resumeDir, CONFIG_FILE) : (str(p, "config") ?? `${file} (config export)`);
  if (p.values.check) {
    println(io, `workflow ${wf.name}: roles ${roles.join(", ")}`);
    await checkTraining({ file, exp, raw, roles, source }, io);
    return 0;
  }
  const { config, cast } = resolveRunConfig(raw, { roles, source });
  // module and config checked against each other (scoring models, reward weights) before any file is written
  const mod = trainingModule(exp, file);
  const opts = runtimeFromConfig(config, cast, mod);
  if (config.runtime.transport === "nats") envRunKey(config.runtime.nats);
  println(io, `workflow ${wf.name}: roles ${roles.join(", ")}`);
  for (const [role, e] of Object.entries(cast)) println(io, `  ${role} -> ${e.model}${e.adapter ? `/${e.adapter}` : ""}`);
  const effective: RunConfig = { ...config, workflow: resolve(file) };
  // one writer per run directory (RUN_LOCKED otherwise), from before config.json is touched to the end
  const lock = lockRun(config.runDir, "maso train");
  locks.push(lock);
  if (resumeDir === undefined) {
    // refuse before config.json is touched: it is what a later --resume of that run reads
    if ((await listCheckpoints(config.runDir)).length > 0)
      throw new MasoError(
        "RUN_EXISTS",
        `${config.runDir} already has checkpoints`,
        `continue it with 'maso train --resume ${config.runDir}', or choose a new --run-dir`,
      );
    println(io, `effective config: ${await writeEffectiveConfig(config.runDir, effective)}`);
  }
  const { schedule } = config;
  let progress = createProgress(io.out, { total: schedule.steps });
  const result = await runTraining({
    runDir: config.runDir,
    lock,
    build: (startStep) =>
      config.runtime.transport === "nats"
        ? createNatsRuntime(
            { ...opts, startStep },
            { settings: config.runtime.nats, runDir: config.runDir, config: effective, startStep, log: (l) => progress.log(l) },
          )
        : createRuntime({ ...opts, startStep }),
    tasks: mod.tasks.train,
    initialState: mod.initialState,
    taskId: mod.taskId,
    steps: schedule.steps,
    tasksPerStep: schedule.tasksPerStep,
    groupSize: config.algorithm.groupSize,
    seed: config.seed,
    checkpointEvery: config.checkpoint.every,
    keep: config.checkpoint.keep,
    eval: evalOptions(config, mod, (label, done, total) => progress.phase(label, done, total)),
    test: p.values["eval-test"]
      ? { ...scoredSplit(mod, file, "test"), onProgress: (done, total) => progress.phase("eval test", done, total) }
      : undefined,
    onEvalAtStart: (split, r) =>
      progress.log(`step 0 (untrained cast): ${split} metric ${r.metric.toFixed(4)} over ${r.episodes} episodes`),
    onRollout: (step, done, total) => progress.phase(`step ${step} rollout`, done, total),
    resume: resumeDir !== undefined,
    maxFailedFraction: config.failures.maxFailedFraction,
    maxStaleness: schedule.maxStaleness,
    asyncMode: schedule.asyncMode,
    collapse: { settings: config.failures.collapse, onCollapse: config.failures.onCollapse },
    onResume: (step, skipped) => {
      progress = createProgress(io.out, { total: schedule.steps, startStep: step });
      for (const s of skipped) progress.log(`skipped corrupt checkpoint ${s}`);
      progress.log(`resumed from step ${step}`);
    },
    onStep: stepPrinter(() => progress),
    onCheckpoint: (step, dir) => progress.log(`checkpoint step ${step}: ${dir}`),
    beforeCommit: checkpointPauseHook(io),
  });
  progress.finish();
  const last = result.rows.at(-1);
  const rewards = last
    ? Object.entries(last.roles).map(([r, m]) => `${r} ${Number((m.reward as { total?: number })?.total).toFixed(3)}`)
    : [];
  println(io, `done: ${schedule.steps} steps in ${config.runDir}${rewards.length ? `; last reward ${rewards.join(", ")}` : ""}`);
  if (result.summary) printEndOfRun(io, result.summary);
  return 0;
}

export const trainCommand: Command = {
  name: "train",
  summary: "train a workflow's roles with RL, with checkpoints and exact --resume",
  help: `usage: maso train <workflow file> [--config <file>] [--run-dir <dir>] [--steps <n>] [--precision auto|fp32|bf16] [--eval-test] [--check]
                  [--nats <url|embedded> [--workers spawn|attach] [--run-id <id>] [--ranks <n>]]
       maso train --resume <runDir> [<workflow file>] [--eval-test] [--nats …]

Loads the workflow module (.ts/.js; see docs/training.md: 'workflow', 'rewards', 'tasks',
'initialState', optionally 'config', 'taskId', 'metric'), validates the run config against the
workflow's roles (docs/config.md), writes <runDir>/config.json and trains: metrics.jsonl (per-step,
per-role), trajectories/ and rewards/ per step, summary.json, and checkpoints/step-NNNNNN every
checkpoint.every steps and at the end (newest checkpoint.keep kept, plus the best one on dev,
named by checkpoints/best.json, when eval runs on dev). On dev, the untrained cast is evaluated
before step 1 (metrics row step 0; eval.atStart) and is the first best-on-dev candidate; its
episodes and the last step's go to eval/dev-step-<n>.jsonl and their paired comparison is printed
at the end. A killed run continues exactly with --resume.

options:
  --config <file>     run config (JSON/YAML/JS/TS); replaces the module's 'config' export
  --run-dir <dir>     overrides runDir
  --steps <n>         overrides schedule.steps
  --precision <p>     auto, fp32 or bf16 GEMM operands for every model (over models.<m>.precision;
                      auto: bf16 where the CPU runs it natively; bf16 needs oneDNN, see 'maso doctor')
  --resume <runDir>   continue that run from its newest good checkpoint (settings from its config.json)
  --nats <url>        run every worker group in its own process over NATS (runtime.transport "nats");
                      'embedded' starts a nats-server on 127.0.0.1 for the run (docs/distributed.md)
  --workers <mode>    spawn (default): start local worker processes; attach: use 'maso worker'
                      processes started elsewhere for this run id; both sides need the same
                      run key in MASO_RUN_KEY (64 hex digits, e.g. openssl rand -hex 32)
  --run-id <id>       the run id that scopes NATS subjects (needed with --workers attach)
  --ranks <n>         train every trained model data-parallel on n worker processes
                      (runtime.nats.ranks; implies runtime.transport "nats", --nats embedded by default)
  --eval-test         also evaluate tasks.test before training (untrained cast) and after it (the
                      cast that ships: best on dev, else the last), keep both episode files under
                      eval/, and print and record (summary.json) their paired comparison
  --check             validate everything a run would — module, config (every problem at once),
                      model files and tokenizers, one dry episode through the workflow and the
                      reward functions with placeholder outputs — without training; exit 0 when
                      all pass. Warns (still exit 0) when a role's declared example output takes
                      more tokens of its model's tokenizer than its maxNewTokens`,
  run,
};
