// Credit goes where it is due: in a two-role workflow where only role B's answer decides the
// (shared) reward, B learns to answer "c" while A — whose output is irrelevant, so its advantages are
// pure noise — is held near its start by the KL-to-reference term: its exact KL stays under a stated
// bound while B moves by more than a nat. One frozen base, one LoRA adapter per role.
import { describe, expect, it } from "vitest";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { adapterPerRole, createRuntime } from "../../src/runtime/index.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { firstDist, items, klExact, probFirst, type TwoState, twoRoleWorkflow, warmModel } from "./helpers.js";

/** A's drift bound: KL(A_start ‖ A_now) of its first-token distribution, in nats. */
const A_KL_BOUND = 0.1;
const choices = ["abcd", "bcda", "cdab", "dabc"];
const prompts = ["q1", "q2"];
// B sees A's note: the first three letters of a rotation (maxNewTokens 3)
const bPrompts = prompts.flatMap((q) => choices.map((c) => `${q}:${c.slice(0, 3)}`));

describe("two roles, only B decides the reward", () => {
  it(`B improves; A stays within KL ${A_KL_BOUND} of its start`, async () => {
    const model = warmModel(21, [...prompts, ...bPrompts], choices);
    const rt = await createRuntime<TwoState, string>({
      workflow: twoRoleWorkflow(),
      models: [
        {
          name: "base",
          source: { decoder: model },
          lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "o_proj", "up_proj", "down_proj"] },
        },
      ],
      cast: adapterPerRole("base", ["writer", "answerer"]),
      rewards: [sharedOutcome((t: Trajectory<TwoState>) => (t.finalState.answer.startsWith("c") ? 1 : 0))],
      advantage: { estimator: "grpo" },
      // ten steps suffice with one whole-batch minibatch and a symmetric clip (the library defaults to 16 and DAPO's [0.8, 1.28])
      trainer: { lr: 1e-2, epochs: 2, minibatchSize: 0, clipHigh: 0.2, kl: { coef: 0.2 } },
      seed: 4,
    });
    const pB = () => bPrompts.reduce((a, q) => a + probFirst(model, q, "c", "answerer"), 0) / bPrompts.length;
    const start = prompts.map((q) => firstDist(model, q, "writer"));
    const klA = () => prompts.reduce((a, q, i) => a + klExact(start[i], firstDist(model, q, "writer")), 0) / prompts.length;
    const before = pB();
    const reported: number[] = []; // writer's logged KL to reference, per step
    for (let step = 0; step < 10; step++) {
      const r = await rt.controller.step(items(prompts, 8, (q) => ({ q, note: "", answer: "" }), `s${step}`));
      reported.push(r.roles.writer.klRef);
    }
    const startB = bPrompts.map((q) => firstDist(model, q, null));
    const klB = bPrompts.reduce((a, q, i) => a + klExact(startB[i], firstDist(model, q, "answerer")), 0) / bPrompts.length;
    expect(before).toBeLessThan(0.35);
    expect(pB()).toBeGreaterThan(before + 0.3);
    expect(klB).toBeGreaterThan(1);
    expect(klA()).toBeLessThan(A_KL_BOUND);
    // the logged per-role KL (sampled k3 over all of A's tokens) agrees once the KL term has acted
    expect(reported.slice(-3).reduce((a, b) => a + b, 0) / 3).toBeLessThan(A_KL_BOUND);
  });
});
