// Saves and restores the trainable state that HF/PEFT files don't carry: AdamW moments and step,
// and a critic's value head. Both are plain safetensors files, so they are inspectable with any
// safetensors tool; this module must not decide *when* to checkpoint (src/checkpoint does).
import { join } from "node:path";
import { MasoError } from "../../errors.js";
import type { ValueHead } from "../model/value-head.js";
import type { AdamW } from "../optim/adamw.js";
import { assertFiniteParams } from "../params.js";
import { openSafetensors, writeSafetensors } from "./safetensors.js";

export const OPTIMIZER_FILE = "optimizer.safetensors";
export const VALUE_HEAD_FILE = "value_head.safetensors";

/** Writes every group's first and second moments plus the step count to `<dir>/optimizer.safetensors`. */
export async function saveOptimizerState(dir: string, opt: AdamW): Promise<void> {
  const tensors = [...opt.state.moments].flatMap(([name, mv]) => [
    { name: `${name}.exp_avg`, shape: [mv.m.length], data: mv.m },
    { name: `${name}.exp_avg_sq`, shape: [mv.v.length], data: mv.v },
  ]);
  await writeSafetensors(join(dir, OPTIMIZER_FILE), tensors, {
    metadata: { step: String(opt.state.step), groups: JSON.stringify([...opt.state.moments.keys()]) },
  });
}

/** Restores moments and step into an optimiser built over the same parameter groups. */
export async function loadOptimizerState(dir: string, opt: AdamW): Promise<void> {
  const file = join(dir, OPTIMIZER_FILE);
  const r = await openSafetensors(file);
  try {
    const meta = r.header.metadata ?? {};
    const step = Number(meta.step);
    if (!Number.isInteger(step) || step < 0) throw new MasoError("OPTIMIZER_STATE", `${file}: metadata 'step' is missing or invalid`);
    const saved: string[] = JSON.parse(meta.groups ?? "[]");
    const have = [...opt.state.moments.keys()];
    if (saved.length !== have.length || saved.some((g) => !opt.state.moments.has(g))) {
      throw new MasoError(
        "OPTIMIZER_STATE",
        `${file} holds groups [${saved.join(", ")}], the optimiser has [${have.join(", ")}]`,
        "build the optimiser over the same models and adapters as the saved run",
      );
    }
    for (const [name, mv] of opt.state.moments) {
      await r.readF32Into(`${name}.exp_avg`, mv.m);
      await r.readF32Into(`${name}.exp_avg_sq`, mv.v);
    }
    opt.state.step = step;
  } finally {
    await r.close();
  }
}

export async function saveValueHead(dir: string, vh: ValueHead): Promise<void> {
  const tensors = vh.params.specs.map((s) => ({ name: s.name, shape: s.shape, data: vh.params.get(s.name) }));
  await writeSafetensors(join(dir, VALUE_HEAD_FILE), tensors, { metadata: { hidden: String(vh.hidden), detach: String(vh.detach) } });
}

/** Loads value-head tensors into `vh` (shapes must match: same hidden size and model width). */
export async function loadValueHead(dir: string, vh: ValueHead): Promise<void> {
  const r = await openSafetensors(join(dir, VALUE_HEAD_FILE));
  try {
    for (const s of vh.params.specs) await r.readF32Into(s.name, vh.params.get(s.name));
  } finally {
    await r.close();
  }
  assertFiniteParams(vh.params, join(dir, VALUE_HEAD_FILE));
}
