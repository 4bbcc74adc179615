// Hand-computed cases for MARFT's GAE: the cross-agent chain at action level and at token level, the
// single-agent (n = 1) case, truncated episodes and chaining in pieces. Expected numbers are written out.

import { describe, expect, it } from "vitest";
import { gaeAction } from "./gae-action.js";
import { actionChain, gaeChain, tokenChain } from "./gae-chain.js";
import { gaeToken } from "./gae-token.js";
import type { SampleMeta } from "./types.js";

const m = (episode: string, role: string, turn: number, reward: number, value?: number): SampleMeta => ({
  episode,
  role,
  model: "shared",
  group: "t",
  turn,
  reward,
  value,
});

function expectClose(actual: ArrayLike<number>, expected: number[], digits = 6): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => {
    expect(actual[i], `index ${i}`).toBeCloseTo(e, digits);
  });
}

describe("gae-action (MARFT action level)", () => {
  // One episode, 2 steps × 2 agents (reasoner, actor); only the last actor is rewarded.
  // γ = 0.9, λ = 0.8, V = [0.5, 0.6, 0.7, 0.8], r = [0, 0, 0, 1], terminal.
  // δ3 = 1 − 0.8 = 0.2                     A3 = 0.2
  // δ2 = 0.9·0.8 − 0.7 = 0.02  (last agent of step 0 → agent 1 of step 1: see δ1)
  // A2 = 0.02 + 0.72·0.2 = 0.164
  // δ1 = 0.9·0.7 − 0.6 = 0.03  (actor at t=0 bootstraps from reasoner at t=1)
  // A1 = 0.03 + 0.72·0.164 = 0.14808
  // δ0 = 0.9·0.6 − 0.5 = 0.04  (reasoner bootstraps from actor of the same step)
  // A0 = 0.04 + 0.72·0.14808 = 0.1466176
  const samples = [m("e", "reasoner", 0, 0, 0.5), m("e", "actor", 0, 0, 0.6), m("e", "reasoner", 1, 0, 0.7), m("e", "actor", 1, 1, 0.8)];
  const layout = { offsets: [0, 3, 5, 8, 10], mask: [0, 1, 1, 0, 1, 0, 1, 1, 1, 1] };

  it("chains δ across agents and steps", () => {
    const out = gaeAction.estimate({ ...layout, samples }, { gamma: 0.9, lambda: 0.8, normalize: "none" });
    expectClose(out.sampleAdvantages!, [0.1466176, 0.14808, 0.164, 0.2]);
    expectClose(out.advantages, [0, 0.1466176, 0.1466176, 0, 0.14808, 0, 0.164, 0.164, 0.2, 0.2]);
    // returns = A + V, before any whitening
    expectClose(out.returns, [0, 0.6466176, 0.6466176, 0, 0.74808, 0, 0.864, 0.864, 1.0, 1.0]);
  });

  it("bootstraps a cut-off episode from bootstrapValue", () => {
    const cut = samples.map((s, i) => (i === 3 ? { ...s, done: false, bootstrapValue: 0.5 } : s));
    const out = gaeAction.estimate({ ...layout, samples: cut }, { gamma: 0.9, lambda: 0.8, normalize: "none" });
    // δ3 = 1 + 0.9·0.5 − 0.8 = 0.65; A2 = 0.02 + 0.72·0.65 = 0.488
    expectClose(out.sampleAdvantages!.slice(2), [0.488, 0.65]);
  });

  it("throws when a cut-off episode has no bootstrapValue, or a record has no value", () => {
    const cut = samples.map((s, i) => (i === 3 ? { ...s, done: false } : s));
    expect(() => gaeAction.estimate({ ...layout, samples: cut })).toThrow(/bootstrapValue/);
    const noValue = samples.map((s, i) => (i === 1 ? { ...s, value: undefined } : s));
    expect(() => gaeAction.estimate({ ...layout, samples: noValue })).toThrow(/samples\[1\]\.value/);
  });

  it("keeps episodes apart even when interleaved in the batch", () => {
    const a = [m("x", "r", 0, 0, 0.5), m("y", "r", 0, 1, 0.3), m("x", "a", 0, 1, 0.6)];
    const out = gaeAction.estimate({ offsets: [0, 1, 2, 3], mask: [1, 1, 1], samples: a }, { gamma: 0.9, lambda: 0.8, normalize: "none" });
    // x: A(a) = 1 − 0.6 = 0.4; A(r) = 0.9·0.6 − 0.5 + 0.72·0.4 = 0.328. y alone: 1 − 0.3 = 0.7
    expectClose(out.sampleAdvantages!, [0.328, 0.7, 0.4]);
  });

  it("uses defaults γ = 0.99, λ = 0.95", () => {
    const out = gaeAction.estimate(
      { offsets: [0, 1, 2], mask: [1, 1], samples: [m("e", "r", 0, 0, 0.5), m("e", "a", 0, 1, 0.6)] },
      { normalize: "none" },
    );
    // A1 = 0.4; A0 = 0.99·0.6 − 0.5 + 0.99·0.95·0.4 = 0.094 + 0.3762 = 0.4702
    expectClose(out.sampleAdvantages!, [0.4702, 0.4]);
  });

  it("whitens per role by default", () => {
    const two = [m("e1", "r", 0, 0, 0), m("e1", "a", 0, 1, 0), m("e2", "r", 0, 0, 0), m("e2", "a", 0, 3, 0)];
    const out = gaeAction.estimate({ offsets: [0, 1, 2, 3, 4], mask: [1, 1, 1, 1], samples: two }, { gamma: 1, lambda: 1 });
    // raw: e1 → [1, 1], e2 → [3, 3]; per role each pair is {1, 3} → [−1, 1]
    expectClose(out.sampleAdvantages!, [-1, -1, 1, 1], 4);
  });
});

describe("gae-token (MARFT token level)", () => {
  it("is the n = 1 case for a plain single-agent sequence", () => {
    // γ = 0.9, λ = 0.8, V = [0.1, 0.2, 0.3] on the response, reward 1 on the last token
    // A2 = 1 − 0.3 = 0.7; A1 = 0.9·0.3 − 0.2 + 0.72·0.7 = 0.574; A0 = 0.9·0.2 − 0.1 + 0.72·0.574 = 0.49328
    const out = gaeToken.estimate(
      { offsets: [0, 4], mask: [0, 1, 1, 1], values: [9, 0.1, 0.2, 0.3], samples: [m("e", "solo", 0, 1)] },
      { gamma: 0.9, lambda: 0.8, normalize: "none" },
    );
    expectClose(out.advantages, [0, 0.49328, 0.574, 0.7]);
    expectClose(out.returns, [0, 0.59328, 0.774, 1.0]);
  });

  it("bootstraps the last token of an agent from the next agent's first response token", () => {
    // reasoner [prompt, r0, r1, pad] V = [_, 0.1, 0.2, _], reward 0; actor [prompt, prompt, a0, a1] V = [_, _, 0.3, 0.4], reward 1
    // A(a1) = 1 − 0.4 = 0.6
    // A(a0) = 0.9·0.4 − 0.3 + 0.72·0.6 = 0.492
    // A(r1) = 0 + 0.9·0.3 − 0.2 + 0.72·0.492 = 0.42424        (reward 0 + bootstrap from a0)
    // A(r0) = 0.9·0.2 − 0.1 + 0.72·0.42424 = 0.3854528
    const out = gaeToken.estimate(
      {
        offsets: [0, 4, 8],
        mask: [0, 1, 1, 0, 0, 0, 1, 1],
        values: [5, 0.1, 0.2, 5, 5, 5, 0.3, 0.4],
        samples: [m("e", "reasoner", 0, 0), m("e", "actor", 0, 1)],
      },
      { gamma: 0.9, lambda: 0.8, normalize: "none" },
    );
    expectClose(out.advantages, [0, 0.3854528, 0.42424, 0, 0, 0, 0.492, 0.6]);
  });

  it("adds per-token rewards inside an action", () => {
    // one record, V = [0, 0], tokenRewards = [0.5, 0], reward 1, γ = λ = 1: A1 = 1, A0 = 0.5 + 0 − 0 + 1 = 1.5
    const out = gaeToken.estimate(
      { offsets: [0, 2], mask: [1, 1], values: [0, 0], tokenRewards: [0.5, 0], samples: [m("e", "r", 0, 1)] },
      { gamma: 1, lambda: 1, normalize: "none" },
    );
    expectClose(out.advantages, [1.5, 1]);
  });

  it("needs per-token values and at least one response token per record", () => {
    const s = [m("e", "r", 0, 1)];
    expect(() => gaeToken.estimate({ offsets: [0, 2], mask: [1, 1], samples: s })).toThrow(/values/);
    expect(() => gaeToken.estimate({ offsets: [0, 2], mask: [0, 0], values: [0, 0], samples: s })).toThrow(/no response tokens/);
  });
});

describe("gaeChain", () => {
  it("matches the recursion written out", () => {
    // δ = [0.9·0.2 − 0.5, 1 − 0.2] = [−0.32, 0.8]; A = [−0.32 + 0.72·0.8, 0.8] = [0.256, 0.8]
    expectClose(gaeChain([0.5, 0.2], [0, 1], 0.9, 0.8), [0.256, 0.8]);
  });

  it("gives the same result run in pieces as run whole (two worker groups exchanging two scalars)", () => {
    const v = [0.3, 0.1, 0.7, 0.2, 0.9];
    const r = [0.1, 0, 0.5, 0, 1];
    const whole = gaeChain(v, r, 0.97, 0.9);
    const tail = gaeChain(v.slice(3), r.slice(3), 0.97, 0.9);
    const head = gaeChain(v.slice(0, 3), r.slice(0, 3), 0.97, 0.9, { nextValue: v[3], nextAdvantage: tail[0] });
    expectClose([...head, ...tail], [...whole], 12);
  });

  it("rejects γ outside [0, 1]", () => {
    expect(() => gaeChain([0], [0], 1.5, 0.9)).toThrow(/gamma/);
  });
});

describe("agent chains in pieces (what worker groups run)", () => {
  // the reasoner/actor episode of the gae-action case, split between two groups
  const rec = (values: number[], rewards: number[]) => ({ values, rewards: Float64Array.from(rewards) });

  it("action level: the tail piece's head continues the head piece", () => {
    const opts = { gamma: 0.9, lambda: 0.8 };
    const tail = actionChain.piece([rec([0.7, 9], [0, 0]), rec([0.8], [1])], opts, { nextValue: 0, nextAdvantage: 0 });
    const head = actionChain.piece([rec([0.5], [0]), rec([0.6, 9], [0, 0])], opts, tail.head);
    expectClose([...head.advantages.map((a) => a[0]), ...tail.advantages.map((a) => a[0])], [0.1466176, 0.14808, 0.164, 0.2]);
    expect(head.advantages[1].length).toBe(2);
    expectClose(tail.returns[1], [1.0]);
    expect(tail.head.nextValue).toBe(0.7);
    expect(tail.head.nextAdvantage).toBeCloseTo(0.164, 12);
  });

  it("token level: chains tokens across records and pieces", () => {
    const opts = { gamma: 0.9, lambda: 0.8 };
    const actor = tokenChain.piece([rec([0.3, 0.4], [0, 1])], opts, { nextValue: 0, nextAdvantage: 0 });
    const reasoner = tokenChain.piece([rec([0.1, 0.2], [0, 0])], opts, actor.head);
    expectClose([...reasoner.advantages[0], ...actor.advantages[0]], [0.3854528, 0.42424, 0.492, 0.6]);
  });

  it("finishes by whitening per role by default", () => {
    const samples = [m("e1", "r", 0, 0), m("e2", "r", 0, 0)];
    const out = actionChain.finish(Float32Array.of(1, 3), { offsets: [0, 1, 2], mask: [1, 1] }, samples, {});
    expectClose(out, [-1, 1], 4);
  });
});
