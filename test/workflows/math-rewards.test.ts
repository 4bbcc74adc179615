// MARFT math's reward rule: only the last agent action (the final actor) gets 1 if correct, every other
// record 0 before GAE (plus the format term), on a hand-built and on scripted trajectories; a hand-computed
// action-level (and token-level) GAE over the reasoner → actor chain of a 2-round episode; and the
// module configs select the estimators that do it.
import { describe, expect, it } from "vitest";
import type { MathState } from "../../examples/workflows/marft-math/state.js";
import * as single from "../../examples/workflows/marft-math/single-agent.js";
import * as dual from "../../examples/workflows/marft-math/workflow.js";
import { workflowRoles } from "../../src/cli/commands/train.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { combineRewards, type EpisodeRewards } from "../../src/rewards/index.js";
import { rec, traj } from "../../src/rewards/test-trajectories.js";
import { gaeAction, gaeToken, type SampleMeta } from "../../src/rl/index.js";
import type { TrainerOptions } from "../../src/rl/update/config.js";
import type { Trajectory, Workflow } from "../../src/workflow/index.js";
import { boxTask, mathScript, walkMath } from "./math-fixtures.js";

const rewardsOf = (t: Trajectory<MathState>) => combineRewards(t, boxTask, dual.rewards);
const byNodeTurn = (e: EpisodeRewards) => Object.fromEntries(e.rewards.map((r) => [`${r.node}@${r.turn}`, r.value]));

/** reasoner → actor → judge per round, hand-built; the episode's final verdict is `correct`. */
function twoRounds(correct: boolean): Trajectory<MathState> {
  const round = (turn: number) => [
    rec({ node: "reasoner", turn }),
    rec({ node: "actor", turn }),
    rec({ node: "judge", kind: "function", turn }),
  ];
  const t = traj([...round(1), ...round(2)]) as Trajectory<MathState>;
  t.finalState = { ...dual.initialState(boxTask), correct, rounds: 2 };
  return t;
}

describe("MARFT math rewards (before GAE)", () => {
  it("give the final actor 1 when correct and every other record 0 (hand-built)", () => {
    expect(byNodeTurn(rewardsOf(twoRounds(true)))).toEqual({ "reasoner@1": 0, "actor@1": 0, "reasoner@2": 0, "actor@2": 1 });
    expect(byNodeTurn(rewardsOf(twoRounds(false)))).toEqual({ "reasoner@1": 0, "actor@1": 0, "reasoner@2": 0, "actor@2": 0 });
  });

  it("give the same on scripted runs, and −1 × weight to a malformed output", async () => {
    const right = await walkMath(mathScript(["7", "12"]));
    expect(byNodeTurn(rewardsOf(right.trajectory))).toEqual({ "reasoner@1": 0, "actor@1": 0, "reasoner@2": 0, "actor@2": 1 });
    const wrong = await walkMath(mathScript(["1", "2", "3"]));
    expect(Object.values(byNodeTurn(rewardsOf(wrong.trajectory)))).toEqual([0, 0, 0, 0, 0, 0]);
    const computes = await walkMath((req) => (req.role === "reasoner" ? "\\boxed{12}" : "\\boxed{12}"));
    const e = rewardsOf(computes.trajectory);
    expect(byNodeTurn(e)).toEqual({ "reasoner@1": -1, "actor@1": 1 });
    expect(e.rewards[0].byKind).toEqual({ format: -1, trajectory: 0 });
  });

  it("single agent: the final actor action only", async () => {
    const { trajectory: t } = await walkMath(mathScript(["5", "12"]), "single");
    expect(byNodeTurn(combineRewards(t, boxTask, single.rewards))).toEqual({ "actor@1": 0, "actor@2": 1 });
  });
});

describe("MARFT credit assignment over the reasoner → actor chain", () => {
  // one 2-round episode, wrong then right: rewards 0, 0, 0, 1 in agent order
  const e = rewardsOf(twoRounds(true));
  const V = [0.2, 0.5, 0.4, 0.7]; // critic values of each agent's own observation
  const metas: SampleMeta[] = e.rewards.map((r, i) => ({
    episode: "ep-1",
    role: r.role!,
    model: "base",
    group: "boxes",
    turn: r.turn,
    reward: r.value as number,
    value: V[i],
  }));
  const gamma = 0.9;
  const lambda = 0.8;

  it("action level: δ_m = r_m + γV(next agent's observation) − V_m, A_m = δ_m + γλA_{m+1}", () => {
    // by hand: δ = [0.9·0.5 − 0.2, 0.9·0.4 − 0.5, 0.9·0.7 − 0.4, 1 − 0.7] = [0.25, −0.14, 0.23, 0.3]
    // A_4 = 0.3; A_3 = 0.23 + 0.72·0.3 = 0.446; A_2 = −0.14 + 0.72·0.446 = 0.18112; A_1 = 0.25 + 0.72·0.18112 = 0.3804064
    const expected = [0.3804064, 0.18112, 0.446, 0.3];
    const layout = { offsets: [0, 2, 4, 6, 8], mask: [0, 1, 0, 1, 0, 1, 0, 1] };
    const out = gaeAction.estimate({ ...layout, samples: metas }, { gamma, lambda, normalize: "none" });
    expect(Array.from(out.sampleAdvantages!)).toEqual(expected.map((a) => expect.closeTo(a, 6)));
    expect(Array.from(out.returns).filter((_, k) => layout.mask[k] === 1)).toEqual(expected.map((a, i) => expect.closeTo(a + V[i], 6)));
  });

  it("token level: the same chain through every response token", () => {
    // two response tokens per action; V per token; the reward sits on the action's last token
    const v = [0.1, 0.2, 0.3, 0.5, 0.2, 0.4, 0.6, 0.7];
    const r = [0, 0, 0, 0, 0, 0, 0, 1];
    const expected: number[] = [];
    let next = 0;
    let carry = 0;
    for (let k = 7; k >= 0; k--) {
      carry = r[k] + gamma * next - v[k] + gamma * lambda * carry;
      expected[k] = carry;
      next = v[k];
    }
    // spot values by hand: A_8 = 1 − 0.7 = 0.3; A_7 = 0.9·0.7 − 0.6 + 0.72·0.3 = 0.246
    expect(expected[7]).toBeCloseTo(0.3, 10);
    expect(expected[6]).toBeCloseTo(0.246, 10);
    const offsets = [0, 3, 6, 9, 12];
    const mask = [0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1];
    const values = mask.map((m, k) => (m ? v[Math.floor(k / 3) * 2 + (k % 3) - 1] : 0));
    const out = gaeToken.estimate({ offsets, mask, values, samples: metas }, { gamma, lambda, normalize: "none" });
    expect(Array.from(out.advantages).filter((_, k) => mask[k] === 1)).toEqual(expected.map((a) => expect.closeTo(a, 6)));
  });
});

describe("MARFT math configs", () => {
  const resolved = (mod: typeof dual | typeof single, raw: object) => {
    const { config, cast } = resolveRunConfig(raw, { roles: workflowRoles(mod.workflow as unknown as Workflow<object, string>) });
    const opts = runtimeFromConfig(config, cast, mod);
    return { config, opts, trainer: (opts.trainer as Record<string, TrainerOptions>).base };
  };

  it("default: action-level GAE (γ 0.99, λ 0.95) with a value head, action-level PPO, one LoRA adapter per role", () => {
    const { config, opts, trainer } = resolved(dual, dual.config);
    expect(dual.config).toBe(dual.configs.actionLevel);
    expect(opts.advantage).toEqual({ estimator: "gae-action", options: { normalize: "role", gamma: 0.99, lambda: 0.95 } });
    expect(trainer).toMatchObject({ policyLoss: "action", lengthNormalize: true });
    expect(opts.models).toEqual([
      expect.objectContaining({ name: "base", train: "lora", valueHead: expect.anything(), lora: expect.objectContaining({ rank: 8 }) }),
    ]);
    expect(config.models.base.lora?.adapters).toEqual(["reasoner", "actor"]);
    expect(opts.cast).toEqual({ reasoner: { model: "base", adapter: "reasoner" }, actor: { model: "base", adapter: "actor" } });
  });

  it("tokenLevel: the token-level critic with per-token PPO; single agent: one actor adapter, same estimator", () => {
    expect(resolved(dual, dual.configs.tokenLevel).opts.advantage.estimator).toBe("gae-token");
    expect(resolved(dual, dual.configs.tokenLevel).trainer).toMatchObject({ policyLoss: "token" });
    const solo = resolved(single, single.config);
    expect(solo.opts.advantage.estimator).toBe("gae-action");
    expect(solo.opts.cast).toEqual({ actor: { model: "base", adapter: "actor" } });
  });
});
