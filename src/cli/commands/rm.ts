// `maso rm train`: trains a reward model (an engine model plus a scalar head on its last hidden
// state) on preference pairs or scored examples, and writes an HF model directory with the head
// beside it (reward_head.safetensors, reward_model.json), ready for `models.<name>.weights` with
// `frozen: true` and rewardModelReward in a workflow module (docs/reward-models.md).
import { existsSync, readdirSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { saveHfModel } from "../../engine/io/hf-model.js";
import { saveRewardHead } from "../../engine/io/reward-head.js";
import { loadHfModel } from "../../engine/io/hf-model.js";
import { Decoder } from "../../engine/model/decoder.js";
import { saveTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import { MasoError } from "../../errors.js";
import { loadRewardData } from "../../rl/reward-model/data.js";
import { type RewardEval, trainRewardModel } from "../../rl/reward-model/train.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { findModel, modelTokenizer } from "../model-source.js";
import { type Command, println } from "./types.js";

const HELP = `usage: maso rm train --base <model dir> --data <file.jsonl> --out <dir> [options]

Trains a reward model: the base model's weights plus a value head read at the last token of
prompt + response. Each JSONL line is a preference pair {"prompt", "chosen", "rejected"}
(Bradley-Terry loss) or a scored example {"prompt", "response", "score"} (squared error);
"prompt" is text or chat messages (rendered with the tokenizer's chat template).
Writes an HF model directory with the tokenizer, reward_head.safetensors and reward_model.json.

options:
  --base <dir>         model to start from: HF folder, run or checkpoint (required)
  --data <file>        training examples (required)
  --out <dir>          output directory (required, must not exist or be empty)
  --held-out <x>       share of examples held out, seeded (default 0.1)
  --epochs <n>         passes over the training examples (default 3)
  --lr <x>             AdamW learning rate (default 1e-4)
  --batch-size <n>     examples per optimiser step (default 16)
  --max-tokens <n>     tokens per scored text; prompts lose their oldest tokens (default: the model's context, at most 1024)
  --head-hidden <n>    width of the head's tanh layer (default 64)
  --seed <n>           split and shuffle seed (default 0)
  --json               print the training report as JSON`;

const fmt = (e: RewardEval): string =>
  [
    e.accuracy !== null ? `accuracy ${(100 * e.accuracy).toFixed(1)}% of ${e.pairs} pairs` : "",
    e.mse !== null ? `mse ${e.mse.toFixed(4)} pearson ${e.pearson?.toFixed(3) ?? "n/a"} over ${e.scored}` : "",
  ]
    .filter(Boolean)
    .join(", ") || "nothing held out";

async function train(argv: readonly string[], io: Parameters<Command["run"]>[1]): Promise<number> {
  const p = parseFlags(
    "rm train",
    argv,
    {
      base: { type: "string" },
      data: { type: "string" },
      out: { type: "string" },
      "held-out": { type: "string" },
      epochs: { type: "string" },
      lr: { type: "string" },
      "batch-size": { type: "string" },
      "max-tokens": { type: "string" },
      "head-hidden": { type: "string" },
      seed: { type: "string" },
      json: { type: "boolean" },
    },
    0,
  );
  const [base, data, out] = [str(p, "base"), str(p, "data"), str(p, "out")];
  if (!base) throw usageError("rm train: --base <model dir> is required", "rm");
  if (!data) throw usageError("rm train: --data <file.jsonl> is required", "rm");
  if (!out) throw usageError("rm train: --out <dir> is required", "rm");
  if (existsSync(out) && readdirSync(out).length > 0)
    throw new MasoError("OUT_EXISTS", `${out} is not empty`, "choose a new --out directory");
  const heldOut = num(p, "held-out", "rm train", { min: 0, max: 0.9 }) ?? 0.1;
  const epochs = num(p, "epochs", "rm train", { int: true, min: 1, max: 10_000 }) ?? 3;
  const lr = num(p, "lr", "rm train", { min: 0, max: 1 }) ?? 1e-4;
  const batchSize = num(p, "batch-size", "rm train", { int: true, min: 1, max: 65_536 }) ?? 16;
  const headHidden = num(p, "head-hidden", "rm train", { int: true, min: 1, max: 65_536 }) ?? 64;
  const seed = num(p, "seed", "rm train", { int: true, min: 0, max: 0xffffffff }) ?? 0;

  const source = await findModel(base);
  const { config, params } = await loadHfModel(source.hfDir);
  const maxTokens =
    num(p, "max-tokens", "rm train", { int: true, min: 3, max: config.maxPositionEmbeddings }) ??
    Math.min(config.maxPositionEmbeddings, 1024);
  const tok = await modelTokenizer(source, config.vocabSize);
  if (!tok) throw new MasoError("RM_TOKENIZER", `${source.describe} has no tokenizer.json`, "save the tokenizer next to the model");
  const examples = loadRewardData(data);
  const model = new Decoder(config, params, { trainBase: true, seed });
  const report = trainRewardModel(model, tok, examples, {
    epochs,
    lr,
    batchSize,
    heldOut,
    seed,
    maxTokens,
    headHidden,
    onEpoch: (e) => {
      if (!p.values.json)
        println(io, `epoch ${e.epoch}: loss ${e.loss.toFixed(4)}, held-out ${fmt(e.heldOut)} (${(e.ms / 1000).toFixed(1)} s)`);
    },
  });
  await mkdir(out, { recursive: true });
  await saveHfModel(out, config, model.params);
  await saveTokenizer(out, tok);
  const objective = examples.every((e) => e.kind === "pair")
    ? "bradley-terry"
    : examples.every((e) => e.kind === "scored")
      ? "mse"
      : "bradley-terry+mse";
  await saveRewardHead(out, model.valueHead!, {
    format: "maso-reward-model",
    hidden: model.valueHead!.hidden,
    modelHidden: config.hiddenSize,
    training: { base: source.describe, data, objective, epochs, lr, batchSize, heldOutShare: heldOut, seed, maxTokens, report },
  });
  if (p.values.json) println(io, JSON.stringify({ out, ...report }));
  else {
    if (report.truncated > 0) println(io, `${report.truncated} prompts lost their oldest tokens to fit ${maxTokens} tokens`);
    println(io, `held-out ${fmt(report.before)} -> ${fmt(report.after)}`);
    println(io, `saved ${out}`);
  }
  return 0;
}

export const rmCommand: Command = {
  name: "rm",
  summary: "reward models: 'maso rm train' on preference pairs or scored examples",
  help: HELP,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub !== "train") throw usageError(`rm: unknown subcommand '${sub ?? ""}' (only 'train')`, "rm");
    return train(rest, io);
  },
};
