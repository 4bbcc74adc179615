// `maso eval` for workflows: the module's greedy `metric` on its test (or dev) tasks, either of a
// `maso train` run's checkpoint (best on dev by default) or of the untrained cast a workflow file's
// config describes (step 0: "before RL"). Builds runtimes the way `maso train` does; trains nothing.
import { extname, join } from "node:path";
import { CONFIG_FILE, readConfigFile, resolveRunConfig } from "../../config/load-config.js";
import { MasoError } from "../../errors.js";
import { createProgress } from "../../progress/progress-display.js";
import { createRuntime } from "../../runtime/runtime.js";
import { episodeLine, writeEvalEpisodes } from "../../run/eval-episodes.js";
import { evaluateRun } from "../../run/evaluate.js";
import type { Workflow } from "../../workflow/graph-types.js";
import type { Trajectory } from "../../workflow/trajectory.js";
import { type Parsed, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { checkpointFlag } from "../checkpoint-flag.js";
import { precisionFlag, withPrecision } from "../precision-flag.js";
import { runtimeFromConfig } from "../../run/runtime-options.js";
import { scoredSplit, trainingModule, type WorkflowModule } from "../train/workflow-module.js";
import { loadExports, workflowRoles } from "./train.js";
import { type CliIo, println } from "./types.js";

const MODULE_EXTS = [".ts", ".mts", ".js", ".mjs"];

/** True when `path` names a workflow module rather than a run directory. */
export const isWorkflowFile = (path: string): boolean => MODULE_EXTS.includes(extname(path).toLowerCase());

/** The held-out tasks of `split` (default test when the module has them, else dev). */
function heldOut(mod: WorkflowModule<object, unknown>, file: string, p: Parsed) {
  const split = str(p, "split") ?? (mod.tasks.test?.length ? "test" : "dev");
  if (split !== "test" && split !== "dev") throw usageError(`eval: --split must be test or dev, got '${split}'`, "eval");
  return { split, ...scoredSplit(mod, file, split) };
}

/**
 * What a run directory (with its config.json, `rc`) or a workflow file builds: its module, the
 * runtime options of its cast and which checkpoint to load. Shared by `maso eval` and `maso serve`.
 */
export async function workflowRun(src: string, rc: Record<string, unknown> | null, p: Parsed, command: string) {
  const fromFile = rc === null;
  const file = fromFile ? src : typeof rc.workflow === "string" ? rc.workflow : "";
  if (!file) throw new MasoError("RUN_NOT_FOUND", `${join(src, CONFIG_FILE)} names no workflow file`);
  const exp = await loadExports(file);
  const mod = trainingModule(exp, file);
  let raw: unknown = rc && { ...rc, runDir: src };
  let source = join(src, CONFIG_FILE);
  if (fromFile) {
    const cfgPath = str(p, "config");
    raw = cfgPath ? await readConfigFile(cfgPath) : exp.config;
    source = cfgPath ?? `${file} (config export)`;
    if (raw === undefined)
      throw new MasoError("CONFIG_MISSING", `${file} exports no 'config' and no --config was given`, "pass --config <file>");
  } else if (str(p, "config") !== undefined)
    throw usageError(`${command}: --config is for a workflow file; a run uses its config.json`, command);
  const choice = fromFile ? "init" : checkpointFlag(p, "eval");
  if (fromFile && str(p, "checkpoint") !== undefined && choice !== "init")
    throw usageError(`${command}: a workflow file has no checkpoints; pass a run directory instead`, command);
  const roles = workflowRoles(mod.workflow as Workflow<object, string>);
  const { config, cast } = resolveRunConfig(withPrecision(raw, precisionFlag(p, command)), { roles, source });
  const opts = runtimeFromConfig(config, cast, mod);
  return { file, mod, roles, opts, choice, runDir: fromFile ? undefined : src, fromFile };
}

/**
 * Evaluates a workflow run (`runDir` with its config.json) or, for a workflow file, its untrained
 * cast; prints one line (or JSON with --json).
 */
export async function evalWorkflow(src: string, rc: Record<string, unknown> | null, p: Parsed, io: CliIo): Promise<number> {
  const { file, mod, opts, choice, fromFile } = await workflowRun(src, rc, p, "eval");
  const { split, tasks, metric } = heldOut(mod, file, p);
  // on stderr, so stdout stays the result (--json)
  const progress = createProgress(io.err, { total: 0 });
  const r = await evaluateRun({
    runDir: fromFile ? undefined : src,
    checkpoint: choice,
    build: (startStep) => createRuntime({ ...opts, startStep }),
    tasks,
    initialState: mod.initialState,
    metric,
    onProgress: (done, total) => progress.phase(`eval ${split}`, done, total),
  });
  const result = {
    [fromFile ? "workflow" : "run"]: src,
    checkpoint: r.checkpoint,
    step: r.step,
    split,
    episodes: r.episodes,
    metric: r.metric,
  };
  const what = r.checkpoint === "init" ? "untrained (step 0)" : `${r.checkpoint} checkpoint, step ${r.step}`;
  const episodesFile = str(p, "episodes");
  if (episodesFile !== undefined)
    await writeEvalEpisodes(
      episodesFile,
      { source: src, checkpoint: r.checkpoint, step: r.step, split, metric: r.metric, episodes: r.episodes },
      r.perEpisode.map((e) => episodeLine(e.task, e.index, e.metric, e.trajectory as Trajectory)),
    );
  println(
    io,
    p.values.json
      ? JSON.stringify({ ...result, episodeMetrics: r.episodeMetrics })
      : `${split} metric ${r.metric.toFixed(4)} over ${r.episodes} episodes (greedy; ${what})`,
  );
  return 0;
}
