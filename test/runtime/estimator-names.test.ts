// A run picks its advantage estimator by built-in name: createRuntime refuses any other name before a
// step starts, naming the built-ins, and the public API offers no way to register another one (worker
// groups, in other processes too, look names up in the built-in table only).
import { describe, expect, it } from "vitest";
import { MasoError } from "../../src/errors.js";
import { ESTIMATORS } from "../../src/config/run-config.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { type AdvantageChoice, createRuntime, rolesOf, shareAll } from "../../src/runtime/index.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { ask, tinyConfig } from "./helpers.js";

const answer = defineRole<{ q: string }, string>({ name: "answer", prompt: (s) => ask(s.q), parse: textParser(), fallback: () => "" });
const wf = workflow<{ q: string }>({ name: "one" }).role("answer", answer).edge(START, "answer").edge("answer", END).compile();
const models = [{ name: "a", source: { config: tinyConfig(), seed: 1 } }];
const rewards = [sharedOutcome<unknown, { q: string }>(() => 1)];

async function refusal(advantage: AdvantageChoice | Record<string, AdvantageChoice>): Promise<MasoError> {
  const err = await createRuntime({ workflow: wf, models, cast: shareAll("a", rolesOf(wf)), rewards, advantage }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MasoError);
  return err as MasoError;
}

describe("advantage estimators by name", () => {
  it("createRuntime refuses a name that is not built in, listing the built-ins", async () => {
    const e = await refusal({ estimator: "my-estimator" });
    expect(e.code).toBe("RL_UNKNOWN_ESTIMATOR");
    expect(e.message).toMatch(/"my-estimator"/);
    for (const name of ESTIMATORS) expect(e.hint).toContain(name);
  });

  it("checks the per-model form too", async () => {
    const e = await refusal({ a: { estimator: "ppo" } });
    expect(e.code).toBe("RL_UNKNOWN_ESTIMATOR");
    expect(e.message).toMatch(/"ppo"/);
  });

  it("accepts every built-in name", async () => {
    for (const estimator of ESTIMATORS) {
      const rt = await createRuntime({ workflow: wf, models, cast: shareAll("a", rolesOf(wf)), rewards, advantage: { estimator } });
      expect(rt.controller).toBeDefined();
    }
  });

  it("the public API has the built-in table, frozen, and no registration", async () => {
    const root = await import("../../src/index.js");
    const rl = await import("../../src/entry/rl.js");
    expect(Object.keys(rl.estimators).sort()).toEqual([...ESTIMATORS].sort());
    expect(Object.isFrozen(rl.estimators)).toBe(true);
    expect(rl.getEstimator("grpo")).toBe(rl.estimators.grpo);
    for (const tier of [root, rl]) expect(Object.keys(tier).filter((n) => /regist/i.test(n))).toEqual([]);
  });
});
