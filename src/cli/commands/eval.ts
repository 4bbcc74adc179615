// `maso eval`: held-out loss of an engine model (a pretraining run, checkpoint or HF folder) on
// its run's data or --data; for a `maso train` run or a workflow file, the workflow's greedy metric
// on its test (or dev) tasks (eval-workflow.ts). Reads regular files only.
import { join } from "node:path";
import { CONFIG_FILE, parseJsonConfig } from "../../config/load-config.js";
import { type PretrainConfig, resolvePretrainConfig } from "../../config/pretrain-config.js";
import { loadHfModel } from "../../engine/io/hf-model.js";
import { Decoder } from "../../engine/model/decoder.js";
import { resolvePrecision } from "../../engine/precision.js";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { MasoError } from "../../errors.js";
import { readRegularFile, refuseSpecialFiles } from "../../fs/fs-util.js";
import { evalLoss } from "../../run/pretrain.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { precisionFlag } from "../precision-flag.js";
import { findModel } from "../model-source.js";
import { loadPretrainData } from "../pretrain-data.js";
import { evalWorkflow, isWorkflowFile } from "./eval-workflow.js";
import { type Command, println } from "./types.js";

/**
 * The run config in `dir`, or null when there is none or it is not JSON (an HF model folder's
 * config.json is not a run config either, which the caller tells apart). A FIFO or device in its
 * place, or a JSON nested past any config's depth, is a named error rather than a hang or a crash.
 */
async function runConfig(dir: string): Promise<Record<string, unknown> | null> {
  const path = join(dir, CONFIG_FILE);
  let text: string;
  try {
    text = await readRegularFile(path, "utf8");
  } catch (e) {
    if (e instanceof MasoError) throw e;
    return null;
  }
  try {
    return parseJsonConfig(text, path) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof MasoError && e.code !== "CONFIG_TOO_DEEP") return null;
    throw e;
  }
}

export const evalCommand: Command = {
  name: "eval",
  summary: "evaluate a model (held-out loss) or a workflow run (greedy held-out metric)",
  help: `usage: maso eval <runDir|checkpointDir|modelDir> [--data <file|world>] [options]
       maso eval <trainRunDir> [--checkpoint best|latest|<step>|init] [--split test|dev] [--json]
       maso eval <workflow file> [--config <file>] [--split test|dev] [--json]

Prints the held-out loss (nats/token) of the newest good checkpoint of a pretraining run, a
checkpoint directory or an HF model folder, on the run's held-out split or --data.
For a workflow run (maso train): the module's 'metric', greedy, on its test tasks (else dev), at
the best-on-dev checkpoint (checkpoints/best.json) when the run has one, else the newest good one.
For a workflow file: the same metric for the untrained cast of its config (step 0, "before RL").

options:
  --data <file|world>   evaluation text (default: the run's held-out split)
  --seq-len <n>         tokens per window (default: the run's, else 64)
  --windows <n>         windows to score (default 32)
  --model <name>        which model of a multi-model run
  --step <n>            a specific checkpoint step
  --split <test|dev>    workflows: which held-out tasks (default: test when the module has them)
  --checkpoint <which>  workflow runs: best (default when present), latest, a step, or init (untrained)
  --config <file>       workflow file: the run config (default: the module's 'config' export)
  --episodes <file>     workflows: also write every episode (task, metric, trajectory) as JSON
                        lines, for \`maso compare\` and for reading the outputs themselves
  --precision <p>       auto (default: bf16 where the CPU runs it natively, else fp32), fp32 or
                        bf16 (needs oneDNN) GEMM operands for every model
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
        checkpoint: { type: "string" },
        config: { type: "string" },
        episodes: { type: "string" },
        precision: { type: "string" },
      },
      1,
    );
    const src = p.positionals[0];
    if (!src) throw usageError("eval: missing the run, checkpoint or model directory", "eval");
    if (isWorkflowFile(src)) return evalWorkflow(src, null, p, io);
    // a FIFO or device among the files read below would block the read forever
    await refuseSpecialFiles(src, 6, ["trajectories", "rewards", "tensorboard"]);
    const rc = await runConfig(src);
    if (rc && rc.kind !== "pretrain" && rc.models !== undefined && rc.cast !== undefined) return evalWorkflow(src, rc, p, io);
    for (const f of ["checkpoint", "config", "episodes"] as const)
      if (p.values[f] !== undefined) throw usageError(`eval: --${f} is for workflow runs and workflow files`, "eval");
    // an HF model folder also has a config.json; only a pretraining run's is a run config
    const runCfg: PretrainConfig | null = rc?.kind === "pretrain" ? resolvePretrainConfig(rc, join(src, CONFIG_FILE)) : null;
    const dataFlag = str(p, "data");
    if (dataFlag !== undefined && dataFlag !== "world") await refuseSpecialFiles(dataFlag, 0);
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
    const seqLen = num(p, "seq-len", "eval", { int: true, min: 2, max: 1_000_000 }) ?? runCfg?.seqLen ?? 64;
    const windows = num(p, "windows", "eval", { int: true, min: 1, max: 1_000_000 }) ?? 32;
    const model = new Decoder(config, params, { trainBase: false });
    model.precision = resolvePrecision(precisionFlag(p, "eval") ?? "auto");
    const loss = evalLoss(model, stream, seqLen, windows);
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
