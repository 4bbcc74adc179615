// The estimator registry: built-ins present, duplicate names throw, unknown names throw with a hint.

import { describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import { createEstimatorRegistry, estimators, getEstimator, registerEstimator } from "./registry.js";

describe("estimator registry", () => {
  it("holds the built-ins", () => {
    expect(Object.keys(estimators).sort()).toEqual(["dr-grpo", "gae-action", "gae-token", "grpo", "reinforce-pp", "rloo"]);
  });

  it("declares which need a critic and which chain across agents, at which level", () => {
    const props = Object.fromEntries(Object.values(estimators).map((e) => [e.name, [e.critic, e.chain?.level ?? null]]));
    expect(props).toEqual({
      "gae-action": [true, "action"],
      "gae-token": [true, "token"],
      grpo: [false, null],
      rloo: [false, null],
      "reinforce-pp": [false, null],
      "dr-grpo": [false, null],
    });
  });

  it("throws when a name is registered twice", () => {
    const reg = createEstimatorRegistry([estimators.grpo]);
    expect(() => registerEstimator(reg, estimators.grpo)).toThrow(MasoError);
    expect(() => createEstimatorRegistry([estimators.rloo, estimators.rloo])).toThrow(/already registered/);
  });

  it("looks names up and explains unknown ones", () => {
    expect(getEstimator("rloo")).toBe(estimators.rloo);
    try {
      getEstimator("ppo");
      expect.unreachable();
    } catch (e) {
      expect((e as MasoError).code).toBe("RL_UNKNOWN_ESTIMATOR");
      expect((e as MasoError).hint).toMatch(/grpo/);
    }
  });

  it("is frozen", () => {
    expect(() => registerEstimator(estimators as never, { ...estimators.grpo, name: "x" })).toThrow();
  });
});
