// The one per-role builder (runtime roleMetrics) and its metrics.jsonl view: a trained role logs its
// training figures with the rollout's lengths in a fixed key order; a role whose records were all
// unrewarded logs only its rollout figures; NaN becomes null in the JSON line.
import { describe, expect, it } from "vitest";
import type { AssignedRewards } from "../rewards/combine.js";
import type { RoleUpdates } from "../runtime/controller/update-phase.js";
import { roleMetrics } from "../runtime/controller/step-metrics.js";
import type { Trajectory } from "../workflow/trajectory.js";
import { roleRows } from "./role-rows.js";

const rec = (index: number, role: string, promptTokens: number, outputTokens: number, ok = true) => ({
  index,
  kind: "role",
  role,
  promptTokens,
  outputTokens,
  parsed: { ok },
});
const trajectories = [
  { episodeId: "e0", records: [rec(0, "writer", 10, 4), rec(1, "judge", 6, 1, false)] },
  { episodeId: "e1", records: [rec(0, "writer", 12, 2), rec(1, "judge", 8, 3)] },
] as unknown as Trajectory[];
const reward = (role: string, recordIndex: number, value: number) => ({
  role,
  recordIndex,
  value,
  byKind: { trajectory: value },
  bySource: { solved: value, ...(recordIndex === 0 && { tidy: 0.25 }) },
});
const assigned = {
  episodes: [
    { episodeId: "e0", rewards: [reward("writer", 0, 1)] },
    { episodeId: "e1", rewards: [reward("writer", 0, 0)] },
  ],
} as unknown as AssignedRewards;
const policy = {
  entropy: 1.5,
  klRef: Number.NaN,
  clipFrac: 0.1,
  approxKl: 0.01,
  gradNorm: 0.3,
  responseLength: 3,
  minibatches: 1,
  skippedMinibatches: 0,
};
const upd = { writer: { policy } } as unknown as RoleUpdates;
const adv = { writer: { samples: 2, advantageMean: 0, advantageStd: 1, returnMean: 0.5 } };

describe("per-role metrics and their row view", () => {
  it("builds every role of the step, trained roles first, with rollout figures", () => {
    const roles = roleMetrics(trajectories, assigned, adv, upd);
    expect(Object.keys(roles)).toEqual(["writer", "judge"]);
    expect(roles.writer).toMatchObject({ samples: 2, reward: 0.5, records: 2, promptLength: 11, outputLength: 3, formatFailureRate: 0 });
    expect(roles.judge).toMatchObject({
      samples: 0,
      reward: Number.NaN,
      updated: false,
      records: 2,
      promptLength: 7,
      formatFailureRate: 0.5,
    });
  });

  it("rows keep the metrics.jsonl shape and key order", () => {
    const rows = JSON.parse(JSON.stringify(roleRows(roleMetrics(trajectories, assigned, adv, upd))));
    expect(JSON.stringify(rows.writer)).toBe(
      JSON.stringify({
        reward: { total: 0.5, trajectory: 0.5, byName: { solved: 0.5, tidy: 0.25 } },
        samples: 2,
        promptLength: 11,
        outputLength: 3,
        formatFailureRate: 0,
        advantage: { mean: 0, std: 1 },
        entropy: 1.5,
        kl: { ref: null, approx: 0.01 },
        clipFrac: 0.1,
        gradNorm: 0.3,
        length: { response: 3 },
        value: { loss: null, explainedVariance: null },
        updated: 1,
        skippedMinibatches: 0,
      }),
    );
    expect(JSON.stringify(rows.judge)).toBe(
      JSON.stringify({ reward: { total: 0 }, samples: 0, promptLength: 7, outputLength: 2, formatFailureRate: 0.5 }),
    );
  });
});
