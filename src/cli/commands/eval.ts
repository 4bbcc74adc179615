// `maso eval`: held-out loss of an engine model (a pretraining run, checkpoint or HF folder) on
// its run's data or --data; for a `maso train` run, the workflow's greedy metric on its test (or
// dev) tasks at the newest good checkpoint.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CONFIG_FILE } from "../../config/load-config.js";
import { type PretrainConfig, resolvePretrainConfig } from "../../config/pretrain-config.js";
import { loadHfModel } from "../../engine/checkpoint/hf-model.js";
import { Decoder } from "../../engine/model/decoder.js";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { MasoError } from "../../errors.js";
import { evalLoss } from "../../train/pretrain.js";
import { createRuntime } from "../../runtime/runtime.js";
import { evaluateRun } from "../../runtime/train-run.js";
import type { Workflow } from "../../workflow/graph-types.js";
import { resolveRunConfig } from "../../config/load-config.js";
import { num, type Parsed, parseFlags, str } from "../args.js";
import { runtimeOptions } from "../train/runtime-options.js";
import { trainingModule } from "../train/workflow-module.js";
import { loadExports, workflowRoles } from "./train.js";
import { usageError } from "../exit-codes.js";
import { findModel } from "../model-source.js";
import { loadPretrainData } from "../pretrain-data.js";
import { type CliIo, type Command, println } from "./types.js";

async function runConfig(dir: string): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse(await readFile(join(dir, CONFIG_FILE), "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** Greedy held-out metric of a `maso train` run's newest good checkpoint, on its test (or dev) tasks. */
async function evalWorkflowRun(runDir: string, rc: Record<string, unknown>, p: Parsed, io: CliIo): Promise<number> {
  const file = typeof rc.workflow === "string" ? rc.workflow : "";
  if (!file) throw new MasoError("RUN_NOT_FOUND", `${join(runDir, CONFIG_FILE)} names no workflow file`);
  const mod = trainingModule(await loadExports(file), file);
  if (!mod.metric)
    throw new MasoError("EVAL_NO_METRIC", `${file} exports no 'metric'`, "export const metric = (trajectory, task) => score in [0, 1]");
  const split = str(p, "split") ?? (mod.tasks.test?.length ? "test" : "dev");
  if (split !== "test" && split !== "dev") throw usageError(`eval: --split must be test or dev, got '${split}'`, "eval");
  const tasks = mod.tasks[split];
  if (!tasks?.length) throw new MasoError("EVAL_NO_TASKS", `${file} exports no ${split} tasks`, "export tasks = { train, dev, test }");
  const { config, cast } = resolveRunConfig(
    { ...rc, runDir },
    { roles: workflowRoles(mod.workflow as Workflow<object, string>), source: join(runDir, CONFIG_FILE) },
  );
  const opts = runtimeOptions(config, cast, mod);
  const r = await evaluateRun({
    runDir,
    build: (startStep) => createRuntime({ ...opts, startStep }),
    tasks,
    initialState: mod.initialState,
    metric: mod.metric,
  });
  const result = { run: runDir, step: r.step, split, episodes: r.episodes, metric: r.metric };
  println(
    io,
    p.values.json
      ? JSON.stringify(result)
      : `${split} metric ${r.metric.toFixed(4)} over ${r.episodes} episodes (greedy; checkpoint step ${r.step})`,
  );
  return 0;
}

export const evalCommand: Command = {
  name: "eval",
  summary: "evaluate a model (held-out loss) or a workflow run (greedy held-out metric)",
  help: `usage: maso eval <runDir|checkpointDir|modelDir> [--data <file|world>] [options]

Prints the held-out loss (nats/token) of the newest good checkpoint of a pretraining run, a
checkpoint directory or an HF model folder, on the run's held-out split or --data.
For a workflow run (maso train): the module's 'metric', greedy, on its test tasks (else dev).

options:
  --data <file|world>   evaluation text (default: the run's held-out split)
  --seq-len <n>         tokens per window (default: the run's, else 64)
  --windows <n>         windows to score (default 32)
  --model <name>        which model of a multi-model run
  --step <n>            a specific checkpoint step
  --split <test|dev>    workflow runs: which held-out tasks (default: test when the module has them)
  --json                print the result as JSON`,
  async run(argv, io) {
    const p = parseFlags(
      "eval",
      argv,
      {
        data: { type: "string" },
        "seq-len": { type: "string" },
        windows: { type: "string" },
        model: { type: "string" },
        step: { type: "string" },
        json: { type: "boolean" },
        split: { type: "string" },
      },
      1,
    );
    const src = p.positionals[0];
    if (!src) throw usageError("eval: missing the run, checkpoint or model directory", "eval");
    const rc = await runConfig(src);
    if (rc && rc.kind !== "pretrain" && rc.models !== undefined && rc.cast !== undefined) return evalWorkflowRun(src, rc, p, io);
    // an HF model folder also has a config.json; only a pretraining run's is a run config
    const runCfg: PretrainConfig | null = rc?.kind === "pretrain" ? resolvePretrainConfig(rc, join(src, CONFIG_FILE)) : null;
    const dataFlag = str(p, "data");
    const dataCfg: PretrainConfig["data"] =
      dataFlag === undefined
        ? (runCfg?.data ?? { source: "world", worldSeed: 0, heldOutEvery: 20, maxDocuments: null })
        : dataFlag === "world"
          ? { source: "world", worldSeed: 0, heldOutEvery: 20, maxDocuments: null }
          : { source: "file", path: dataFlag, worldSeed: 0, heldOutEvery: 1, maxDocuments: null };
    const source = await findModel(src, { part: str(p, "model"), step: num(p, "step", "eval", { int: true, min: 0 }) });
    const { config, params } = await loadHfModel(source.hfDir);
    const tok = createByteTokenizer();
    if (config.vocabSize !== tok.vocabSize)
      throw new MasoError(
        "NOT_AVAILABLE",
        `eval supports the engine's byte-level models; ${source.describe} has vocabulary ${config.vocabSize}`,
        "evaluate models trained with 'maso pretrain'",
      );
    const data = await loadPretrainData(dataCfg, tok);
    const stream = data.heldOut ?? data.train;
    const seqLen = num(p, "seq-len", "eval", { int: true, min: 2 }) ?? runCfg?.seqLen ?? 64;
    const windows = num(p, "windows", "eval", { int: true, min: 1 }) ?? 32;
    const loss = evalLoss(new Decoder(config, params, { trainBase: false }), stream, seqLen, windows);
    const result = { model: source.describe, step: source.checkpoint?.step ?? null, heldOutLoss: loss, seqLen, windows };
    println(
      io,
      p.values.json
        ? JSON.stringify(result)
        : `held-out loss ${loss.toFixed(4)} nats/token (${source.describe}, ${windows} windows of ${seqLen})`,
    );
    return 0;
  },
};
