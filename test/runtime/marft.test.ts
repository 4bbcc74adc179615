// MARFT dual-agent toy: a reasoner names a rotation of "abcd", the actor must start its answer with
// the reasoner's first letter. Only the actor's action is rewarded; credit reaches the reasoner
// through action-level GAE chained across two worker groups (one model per agent, each with a critic),
// with a critic warm-up and HAPPO-ordered sequential updates. Joint success must rise.
import { describe, expect, it } from "vitest";
import { finalOutcome } from "../../src/rewards/outcome.js";
import { byGroup, createRuntime, type StepItem } from "../../src/runtime/index.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { ask, warmModel } from "./helpers.js";

interface Duo {
  q: string;
  plan: string;
  answer: string;
}
const rotations = ["abcd", "bcda", "cdab", "dabc"];
const prompts = ["q1", "q2"];
const actorPrompt = (q: string, plan: string) => `${q}|${plan}`;
const success = (s: Duo) => (s.plan.length > 0 && s.answer.startsWith(s.plan[0]) ? 1 : 0);

const wf = workflow<Duo>({ name: "duo", metrics: (s) => ({ success: success(s) }) })
  .role(
    "reason",
    defineRole<Duo, string>({ name: "reasoner", prompt: (s) => ask(s.q), parse: textParser(), fallback: () => "", maxNewTokens: 3 }),
    { update: (plan) => ({ plan }) },
  )
  .role(
    "act",
    defineRole<Duo, string>({
      name: "actor",
      prompt: (s) => ask(actorPrompt(s.q, s.plan)),
      parse: textParser(),
      fallback: () => "",
      maxNewTokens: 3,
    }),
    { update: (answer) => ({ answer }) },
  )
  .edge(START, "reason")
  .edge("reason", "act")
  .edge("act", END)
  .compile();

const batch = (tag: string, n: number): StepItem<Duo, null>[] =>
  prompts.flatMap((q, i) =>
    Array.from({ length: n }, (_, k) => ({
      episode: { id: `${tag}-${i}-${k}`, state: { q, plan: "", answer: "" }, taskId: q },
      task: null,
    })),
  );

describe("MARFT dual-agent toy", () => {
  it("joint success rises under action-level GAE with HAPPO updates", async () => {
    const reasoner = warmModel(31, prompts, rotations);
    const actor = warmModel(
      32,
      prompts.flatMap((q) => rotations.map((r) => actorPrompt(q, r.slice(0, 3)))),
      rotations,
    );
    const rt = await createRuntime<Duo, null>({
      workflow: wf,
      models: [
        { name: "reasoner-model", source: { decoder: reasoner }, valueHead: { hidden: 16 } },
        { name: "actor-model", source: { decoder: actor }, valueHead: { hidden: 16 } },
      ],
      cast: byGroup({ "reasoner-model": ["reasoner"], "actor-model": ["actor"] }),
      rewards: [finalOutcome((t: Trajectory<Duo>) => success(t.finalState))],
      advantage: { estimator: "gae-action" }, // MARFT defaults: γ 0.99, λ 0.95, whitened per role
      updateOrder: "happo",
      happo: { order: "random", clip: [0.5, 2] },
      criticWarmupSteps: 2,
      trainer: { lr: 3e-3, criticLr: 1e-2, epochs: 2, policyLoss: "action", lengthNormalize: true },
      seed: 5,
    });
    const measure = async (tag: string) => {
      const ts = await rt.controller.evaluate(batch(tag, 24), { temperature: 1 });
      return ts.reduce((a, t) => a + t.metrics.success, 0) / ts.length;
    };
    const before = await measure("before");
    const reports = [];
    for (let step = 0; step < 10; step++) reports.push(await rt.controller.step(batch(`s${step}`, 8)));
    const after = await measure("after");
    // warm-up steps train only the critics
    expect(reports[0].roles.actor.updated).toBe(false);
    expect(reports[0].roles.actor.valueLoss).toBeGreaterThan(0);
    expect(reports[2].roles.actor.updated).toBe(true);
    expect(reports[2].roles.reasoner.updated).toBe(true);
    // credit reached the unrewarded first agent through the chain
    expect(reports[2].roles.reasoner.advantageStd).toBeGreaterThan(0);
    expect(before).toBeLessThan(0.45);
    expect(after).toBeGreaterThan(before + 0.3);
  });
});
