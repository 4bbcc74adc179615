// The engine parts round-trip exactly: a Decoder with two LoRA adapters and a value head, and an
// AdamW optimiser with moments and step; mismatched live models are refused.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { presetConfig } from "../config/model-presets.js";
import { Decoder } from "../engine/model/decoder.js";
import { createAdamW } from "../engine/optim/adamw.js";
import { createByteTokenizer } from "../engine/tokenizer/byte-tokenizer.js";
import { adamwPart, decoderPart, readDecoderRngState } from "./parts.js";
import { findCheckpoint, restoreCheckpoint } from "./read-checkpoint.js";
import { writeCheckpoint } from "./write-checkpoint.js";

const root = mkdtempSync(join(tmpdir(), "maso-parts-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const cfg = presetConfig("tiny", createByteTokenizer().eosTokenIds);
const lora = { rank: 2, alpha: 4, targets: ["q_proj", "v_proj"] as ("q_proj" | "v_proj")[] };

function build(seed: number) {
  const m = new Decoder(cfg, undefined, { seed, trainBase: false });
  m.addAdapter("planner", lora);
  m.addAdapter("answer", lora);
  m.addValueHead(8);
  for (const a of m.adapters.values()) {
    const d = a.params.data;
    for (let i = 0; i < d.length; i++) d[i] = Math.sin(seed + i);
  }
  const groups = [...m.adapters.values()].map((a) => ({ name: a.name, params: a.params, grads: a.grads }));
  const opt = createAdamW(groups, { lr: 1e-3 });
  return { m, opt };
}

describe("engine checkpoint parts", () => {
  it("round-trip a LoRA + value-head decoder and its optimiser exactly", async () => {
    const a = build(1);
    for (const a1 of a.m.adapters.values()) a1.grads.data.fill(0.01);
    a.opt.step();
    a.opt.step();
    await writeCheckpoint(root, 2, [decoderPart("policy", a.m), adamwPart("optimizer", a.opt)]);
    const ck = await findCheckpoint(root);
    expect(Object.keys(ck.manifest.files).sort()).toEqual([
      "optimizer/moments.safetensors",
      "optimizer/state.json",
      "policy/adapters/answer/adapter_config.json",
      "policy/adapters/answer/adapter_model.safetensors",
      "policy/adapters/planner/adapter_config.json",
      "policy/adapters/planner/adapter_model.safetensors",
      "policy/hf/config.json",
      "policy/hf/model.safetensors",
      "policy/model.json",
      "policy/value_head.safetensors",
    ]);
    expect(await readDecoderRngState(ck.part("policy"))).toBe(a.m.rng.state());

    const b = build(99);
    await restoreCheckpoint(ck, [decoderPart("policy", b.m), adamwPart("optimizer", b.opt)]);
    expect(Array.from(b.m.params.data)).toEqual(Array.from(a.m.params.data));
    for (const n of ["planner", "answer"])
      expect(Array.from(b.m.adapters.get(n)!.params.data)).toEqual(Array.from(a.m.adapters.get(n)!.params.data));
    expect(Array.from(b.m.valueHead!.params.data)).toEqual(Array.from(a.m.valueHead!.params.data));
    expect(b.opt.state.step).toBe(2);
    expect(Array.from(b.opt.state.moments.get("planner")!.v)).toEqual(Array.from(a.opt.state.moments.get("planner")!.v));

    const other = new Decoder(cfg, undefined, { seed: 3, trainBase: false });
    other.addAdapter("planner", lora);
    await expect(restoreCheckpoint(ck, [decoderPart("policy", other), adamwPart("optimizer", b.opt)])).rejects.toMatchObject({
      code: "CHECKPOINT_MODEL_MISMATCH",
    });
  });
});
