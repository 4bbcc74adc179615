// The reward head of a reward model directory: an HF model directory plus `reward_head.safetensors`
// (a value head's tensors, under the value head's names) and `reward_model.json` (its hidden size
// and how it was trained). A directory without the head file is a plain model; this module never
// decides what a score means (src/rl/reward-model does).
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../../errors.js";
import { readRegularFile } from "../../fs/fs-util.js";
import { createRng } from "../../rng.js";
import { assertFiniteParams } from "../params.js";
import { createValueHead, type ValueHead } from "../model/value-head.js";
import { openSafetensors, writeSafetensors } from "./safetensors.js";

export const REWARD_HEAD_FILE = "reward_head.safetensors";
export const REWARD_MODEL_FILE = "reward_model.json";

/** What `reward_model.json` records: the head's shape plus the trainer's own report. */
export interface RewardModelInfo {
  format: "maso-reward-model";
  /** Width of the head's tanh layer. */
  hidden: number;
  /** The base model's hidden size (the head's input). */
  modelHidden: number;
  /** How it was trained (objective, data counts, held-out figures); free-form for readers. */
  training: Record<string, unknown>;
}

/** Writes the head and its description next to an HF model already saved in `dir`. */
export async function saveRewardHead(dir: string, head: ValueHead, info: RewardModelInfo): Promise<void> {
  const tensors = head.params.specs.map((s) => ({ name: s.name, shape: s.shape, data: head.params.get(s.name) }));
  await writeSafetensors(join(dir, REWARD_HEAD_FILE), tensors, { metadata: { hidden: String(head.hidden) } });
  await writeFile(join(dir, REWARD_MODEL_FILE), `${JSON.stringify(info, null, 2)}\n`);
}

/** Does `dir` hold a reward head? */
export const hasRewardHead = (dir: string): boolean => existsSync(join(dir, REWARD_HEAD_FILE));

/**
 * The reward head stored in `dir` for a model of width `modelHidden`, or null when there is none.
 * Shapes are checked against the model (REWARD_HEAD_SHAPE) and values must be finite.
 */
export async function loadRewardHead(dir: string, modelHidden: number): Promise<ValueHead | null> {
  if (!hasRewardHead(dir)) return null;
  const file = join(dir, REWARD_HEAD_FILE);
  const r = await openSafetensors(file);
  let head: ValueHead;
  try {
    const w = r.header.tensors.find((t) => t.name === "value_head.0.weight");
    if (w?.shape.length !== 2 || w.shape[1] !== modelHidden || !(w.shape[0] > 0))
      throw new MasoError(
        "REWARD_HEAD_SHAPE",
        `${file}: value_head.0.weight has shape [${w?.shape.join(", ") ?? "missing"}], the model's hidden size is ${modelHidden}`,
        "the head belongs to another base model; train it again on this one",
      );
    head = createValueHead(modelHidden, w.shape[0], createRng(0), false);
    for (const s of head.params.specs) await r.readF32Into(s.name, head.params.get(s.name));
  } finally {
    await r.close();
  }
  assertFiniteParams(head.params, file);
  return head;
}

/** The `reward_model.json` of a reward model directory (undefined when absent). */
export async function readRewardModelInfo(dir: string): Promise<RewardModelInfo | undefined> {
  const path = join(dir, REWARD_MODEL_FILE);
  if (!existsSync(path)) return undefined;
  return JSON.parse(await readRegularFile(path, "utf8", { maxBytes: 1 << 20 })) as RewardModelInfo;
}
