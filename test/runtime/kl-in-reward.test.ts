// KL in the reward, through the runtime's one mechanism: the trainer's kl settings with placement
// "reward" fold −β·KL(old ‖ ref) into each token's reward (tokenRewardsOf), and REINFORCE++ turns
// those token rewards into returns. Hand-computed numbers; with placement "loss" the reward is untouched.
import { describe, expect, it } from "vitest";
import type { KlSettings } from "../../src/rl/update/types.js";
import type { CachedSample } from "../../src/runtime/worker-group/sample-cache.js";
import { computeAdvantages, tokenRewardsOf } from "../../src/runtime/worker-group/worker-advantages.js";

// one prompt token + 3 response tokens; k1 KL = old − ref = [0.5, 0, 0.5]; reward 1
const sample = (): CachedSample => ({
  id: 0,
  role: "r",
  episode: "e",
  node: "n",
  visit: 0,
  turn: 0,
  adapter: null,
  temperature: 1,
  tokens: Int32Array.from([7, 1, 2, 3]),
  promptLen: 1,
  batch: null,
  trainedThrough: -1,
  behaviourLogp: null,
  oldLogp: Float32Array.from([-1, -2, -0.5]),
  refLogp: Float32Array.from([-1.5, -2, -1]),
  oldValues: null,
  reward: 1,
  tokenRewards: null,
  groupKey: "g",
  rawAdvantages: null,
  rawReturns: null,
  advantages: null,
  returns: null,
});
const kl = (o: Partial<KlSettings>): KlSettings => ({ coef: 0.1, estimator: "k1", placement: "reward", ...o });

function expectClose(actual: ArrayLike<number>, expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => {
    expect(actual[i], `index ${i}`).toBeCloseTo(e, 6);
  });
}

function reinforcePP(k: KlSettings, gamma = 1): CachedSample {
  const s = sample();
  computeAdvantages({ estimator: "reinforce-pp", options: { gamma, normalize: "none" } }, [s], "m", k);
  return s;
}

describe("KL in the reward (trainer kl.placement = reward)", () => {
  it("folds −β·KL into the token rewards, the scalar reward on the last token", () => {
    expectClose(tokenRewardsOf(sample(), kl({})), [-0.05, 0, 0.95]);
    expectClose(tokenRewardsOf(sample(), kl({ placement: "loss" })), [0, 0, 1]);
    expectClose(tokenRewardsOf(sample(), kl({ coef: 0 })), [0, 0, 1]);
  });

  it("REINFORCE++ sums the KL-shaped token rewards (γ = 1)", () => {
    // r = [−0.05, 0, 0.95] → G = [0.9, 0.95, 0.95]
    const s = reinforcePP(kl({}));
    expectClose(s.returns!, [0.9, 0.95, 0.95]);
    expectClose(s.advantages!, [0.9, 0.95, 0.95]);
  });

  it("discounts with γ", () => {
    // G2 = 0.95; G1 = 0.5·0.95 = 0.475; G0 = −0.05 + 0.5·0.475 = 0.1875
    expectClose(reinforcePP(kl({}), 0.5).returns!, [0.1875, 0.475, 0.95]);
  });

  it("uses the trainer's KL estimator (k3)", () => {
    // k3 at d = 0.5: e^−0.5 + 0.5 − 1 = 0.10653066; r = [−0.0106531, 0, 0.9893469]
    expectClose(reinforcePP(kl({ estimator: "k3" })).returns!, [0.9893469 - 0.0106531, 0.9893469, 0.9893469]);
  });

  it("leaves the reward alone when KL is a loss term, so it is never applied twice", () => {
    expectClose(reinforcePP(kl({ placement: "loss" })).returns!, [1, 1, 1]);
  });
});
