// `maso sft`: supervised fine-tuning on prompt/completion pairs. Not available yet: it fails with
// a clear error (exit 1) and points at what works today.
import { MasoError } from "../../errors.js";
import { parseFlags } from "../args.js";
import type { Command } from "./types.js";

export const sftCommand: Command = {
  name: "sft",
  summary: "supervised fine-tuning on prompt/completion pairs (not available yet)",
  help: `usage: maso sft --data <file.jsonl> [pretrain options]

Supervised fine-tuning with the loss on completions only. Not available yet: this command exits
with code 1. Meanwhile, 'maso pretrain --data file.jsonl' trains on whole texts.`,
  async run(argv) {
    parseFlags("sft", argv, {
      data: { type: "string" },
      "run-dir": { type: "string" },
      config: { type: "string" },
      resume: { type: "string" },
    });
    throw new MasoError(
      "NOT_AVAILABLE",
      "maso sft is not available yet",
      "use 'maso pretrain --data <file.jsonl>' to train on whole texts",
    );
  },
};
