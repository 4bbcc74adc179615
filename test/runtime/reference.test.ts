// Per-role LoRA isolation and the KL reference: updating one role's adapter leaves every other
// adapter and the base bit-identical; KL to the reference is exactly 0 before the first update and
// the reference never moves (adapter-off for LoRA, a frozen copy for full fine-tuning).
import { describe, expect, it } from "vitest";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { adapterPerRole, createRuntime, createWorkerGroup, type ModelSpec, resolveModelSpec } from "../../src/runtime/index.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { promptRequest, type TwoState, tinyConfig, twoRoleWorkflow } from "./helpers.js";

const lora = { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "o_proj", "up_proj"] as const };
const state = (q: string): TwoState => ({ q, note: "", answer: "" });

describe("per-role LoRA on one base", () => {
  it("an update trains only the updated role's adapter; other adapters and the base stay bit-identical", async () => {
    const wf = twoRoleWorkflow();
    const rt = await createRuntime<TwoState, null>({
      workflow: wf,
      models: [{ name: "base", source: { config: tinyConfig(), seed: 5 }, lora: { ...lora, targets: [...lora.targets] } }],
      cast: adapterPerRole("base", ["writer", "answerer"]),
      rewards: [sharedOutcome((t: Trajectory<TwoState>) => (t.finalState.note + t.finalState.answer).length % 3)],
      advantage: { estimator: "rloo" },
      updateOrder: "round-robin",
      trainer: { lr: 1e-2, epochs: 2 },
    });
    const m = rt.workers.base.model;
    const snap = () => ({
      base: m.params.data.slice(),
      writer: m.adapters.get("writer")!.params.data.slice(),
      answerer: m.adapters.get("answerer")!.params.data.slice(),
    });
    const batch = (s: number) =>
      Array.from({ length: 8 }, (_, i) => ({ episode: { id: `s${s}e${i}`, state: state(`q${i % 2}`), taskId: `t${i % 2}` }, task: null }));
    const s0 = snap();
    const r0 = await rt.controller.step(batch(0)); // round-robin: writer first
    const s1 = snap();
    expect(r0.step, "a report counts steps from 1, as metrics rows and checkpoints do").toBe(1);
    expect(r0.roles.writer.updated).toBe(true);
    expect(r0.roles.answerer.updated).toBe(false);
    expect(s1.writer).not.toEqual(s0.writer);
    expect(Buffer.from(s1.answerer.buffer).equals(Buffer.from(s0.answerer.buffer))).toBe(true);
    expect(Buffer.from(s1.base.buffer).equals(Buffer.from(s0.base.buffer))).toBe(true);
    expect((await rt.controller.step(batch(1))).step).toBe(2); // then the answerer
    const s2 = snap();
    expect(s2.answerer).not.toEqual(s1.answerer);
    expect(Buffer.from(s2.writer.buffer).equals(Buffer.from(s1.writer.buffer))).toBe(true);
    expect(Buffer.from(s2.base.buffer).equals(Buffer.from(s0.base.buffer))).toBe(true);
  });
});

const cases: [string, Partial<ModelSpec>, string | null][] = [
  ["LoRA, reference = adapter off", { lora: { ...lora, targets: [...lora.targets] } }, "a"],
  ["full fine-tuning, reference = frozen copy", { reference: "frozen-copy" }, null],
];

describe.each(cases)("KL to reference: %s", (_n, extra, adapter) => {
  it("is exactly 0 before the first update, positive after, and the reference stays frozen", async () => {
    const spec = resolveModelSpec({ name: "m", source: { config: tinyConfig(), seed: 9 }, ...extra });
    const wg = await createWorkerGroup(spec, { roles: { r: adapter }, trainer: { lr: 2e-2, epochs: 2 } });
    const gen = (i: number) => wg.generate(promptRequest(i, { adapter, temperature: 1, maxNewTokens: 4 }));
    const outs = await Promise.all(Array.from({ length: 8 }, (_, i) => gen(i)));
    await wg.computeLogprobs({});
    const before = await wg.diagnostics({});
    expect(before.roles.r.samples).toBe(8);
    expect(before.roles.r.klRef).toBe(0);
    expect(before.roles.r.refDrift).toBe(0);
    await wg.assignRewards({
      items: outs.map((o, i) => ({ id: o.sampleHandle!.id, episodeId: `e${i}`, role: "r", reward: i % 2, groupKey: "g" })),
    });
    await wg.computeAdvantages({ estimator: "grpo", options: {} });
    const { report } = await wg.update({ policy: true, critic: false });
    expect(report.steps).toBe(2);
    const after = await wg.diagnostics({});
    expect(after.roles.r.klRef).toBeGreaterThan(0);
    expect(after.roles.r.refDrift).toBe(0);
  });
});
