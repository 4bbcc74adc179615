// One shared suite every reward helper runs: entries only name trainable records, at most one
// per record, with finite values and known kinds; the same input gives the same output; no mutation.

import { describe, expect, it } from "vitest";
import { isTrainable } from "../workflow/trajectory.js";
import { formatReward } from "./format.js";
import { finalOutcome, sharedOutcome, splitOutcome } from "./outcome.js";
import { codingTrajectory, maskTrajectory } from "./test-trajectories.js";
import { isSkip, type NamedReward, REWARD_KINDS } from "./types.js";
import { marginalGain, perTurnScore } from "./turns.js";

const series = () => ({ 0: 0.1, 1: 0.4, 2: 0.3, 3: 0.9 });
const helpers: NamedReward[] = [
  formatReward(),
  sharedOutcome(() => 0.7),
  splitOutcome(() => 0.7),
  splitOutcome(() => 0.7, { weights: { answer: 1 } }),
  finalOutcome(() => 1),
  perTurnScore(series),
  marginalGain(series),
  marginalGain(series, { offset: 1 }),
];

describe.each(helpers.map((h, i) => [`${h.name}#${i}`, h] as const))("reward helper %s", (_name, helper) => {
  for (const [label, make] of [
    ["M-ASK", maskTrajectory],
    ["coding", codingTrajectory],
  ] as const) {
    it(`keeps the reward contract on the ${label} trajectory`, () => {
      const t = make();
      const before = JSON.stringify(t);
      const entries = helper.fn(t, null);
      expect(JSON.stringify(t)).toBe(before);
      expect(helper.fn(t, null)).toEqual(entries);
      const seen = new Set<number>();
      for (const e of entries) {
        expect(isTrainable(t.records[e.recordIndex])).toBe(true);
        expect(seen.has(e.recordIndex)).toBe(false);
        seen.add(e.recordIndex);
        if (isSkip(e)) expect(e.reason).not.toBe("");
        else {
          expect(REWARD_KINDS).toContain(e.kind);
          expect(Number.isFinite(e.value as number)).toBe(true);
        }
      }
    });
  }
});
