// Reward validation and combination: missing, duplicate and non-finite rewards fail with the
// episode, node and visit named; a throwing reward function excludes its episode without a crash.

import { describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import { assignRewards, combineRewards } from "./combine.js";
import { formatReward } from "./format.js";
import { sharedOutcome } from "./outcome.js";
import { rec, traj } from "./test-trajectories.js";
import type { NamedReward } from "./types.js";

const t = traj([rec({ node: "decompose" }), rec({ node: "retrieve", kind: "tool" }), rec({ node: "answer" })], "ep-7");
const fixed = (name: string, entries: ReturnType<NamedReward["fn"]>): NamedReward => ({ name, fn: () => entries });

function error(fn: () => unknown): MasoError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(MasoError);
    return err as MasoError;
  }
  throw new Error("expected a MasoError");
}

describe("combineRewards validation", () => {
  it("a missing reward names the episode, node and visit", () => {
    const err = error(() => combineRewards(t, null, [fixed("partial", [{ recordIndex: 0, kind: "node", value: 1 }])]));
    expect(err.code).toBe("REWARD_MISSING");
    expect(err.message).toContain(`episode "ep-7", node "answer" visit 0 (record 2)`);
  });

  it("a duplicate reward from one function is an error", () => {
    const err = error(() =>
      combineRewards(t, null, [
        fixed("dup", [
          { recordIndex: 0, kind: "node", value: 1 },
          { recordIndex: 2, kind: "node", value: 1 },
          { recordIndex: 2, kind: "format", value: 0 },
        ]),
      ]),
    );
    expect(err.code).toBe("REWARD_DUPLICATE");
    expect(err.message).toContain(`episode "ep-7", node "answer" visit 0`);
    expect(err.message).toContain(`"dup"`);
  });

  it("NaN, Infinity and bad per-token rewards are errors", () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, [1, Number.NaN], []]) {
      const err = error(() => combineRewards(t, null, [formatReward(), fixed("bad", [{ recordIndex: 2, kind: "trajectory", value }])]));
      expect(err.code).toBe("REWARD_NON_FINITE");
      expect(err.message).toContain(`episode "ep-7", node "answer" visit 0`);
    }
  });

  it("rejects rewards for tool records and unknown records or kinds", () => {
    expect(
      error(() => combineRewards(t, null, [formatReward(), fixed("x", [{ recordIndex: 1, kind: "node", value: 1 }])])).message,
    ).toMatch(/tool record with no sample/);
    expect(
      error(() => combineRewards(t, null, [formatReward(), fixed("x", [{ recordIndex: 9, kind: "node", value: 1 }])])).message,
    ).toMatch(/record 9/);
    expect(
      error(() => combineRewards(t, null, [formatReward(), fixed("x", [{ recordIndex: 0, kind: "bonus" as unknown as "node", value: 1 }])]))
        .code,
    ).toBe("REWARD_INVALID");
  });

  it("an explicit skip leaves a record out, unless another function rewards it", () => {
    const out = combineRewards(t, null, [
      fixed("skipper", [
        { recordIndex: 0, skip: true, reason: "not needed" },
        { recordIndex: 2, skip: true, reason: "not needed" },
      ]),
      fixed("answer-only", [{ recordIndex: 2, kind: "node", value: 1 }]),
    ]);
    expect(out.rewards.map((r) => r.recordIndex)).toEqual([2]);
    expect(out.skipped).toEqual([{ recordIndex: 0, node: "decompose", visit: 0, reasons: ["skipper: not needed"] }]);
  });

  it("sums scalar and per-token terms (scalars land on the last token)", () => {
    const tok = traj([rec({ node: "answer", outputTokens: 3 })]);
    const out = combineRewards(tok, null, [
      fixed("tokens", [{ recordIndex: 0, kind: "node", value: [0.1, 0.2, 0.3] }]),
      fixed("outcome", [{ recordIndex: 0, kind: "trajectory", value: 1 }]),
    ]);
    expect(out.rewards[0].value).toEqual([0.1, 0.2, 1.3]);
    expect(out.rewards[0].byKind.node).toBeCloseTo(0.6);
    expect(error(() => combineRewards(tok, null, [fixed("short", [{ recordIndex: 0, kind: "node", value: [1, 2] }])])).message).toMatch(
      /2 per-token values for 3/,
    );
  });
});

describe("assignRewards", () => {
  const other = traj([rec({ node: "answer" })], "ep-8");
  const failed = {
    ...traj([rec({ node: "answer" })], "ep-9"),
    status: "error" as const,
    error: { code: "ROLE_CALL_FAILED", message: "down", node: "answer", visit: 0 },
  };
  const flaky: NamedReward<{ boom: boolean }> = {
    name: "flaky",
    fn: (tr, task) => {
      if (task.boom) throw new Error("metric crashed");
      return tr.records.filter((r) => r.kind === "role").map((r) => ({ recordIndex: r.index, kind: "trajectory" as const, value: 1 }));
    },
  };

  it("a throwing reward function excludes its episode and is counted, never a crash", () => {
    const out = assignRewards(
      [
        { trajectory: t, task: { boom: false } },
        { trajectory: other, task: { boom: true } },
        { trajectory: failed, task: { boom: false } },
      ],
      [flaky],
    );
    expect(out.episodes.map((e) => e.episodeId)).toEqual(["ep-7"]);
    expect(out.failures).toEqual([
      { episodeId: "ep-8", code: "REWARD_FN_FAILED", message: expect.stringContaining("metric crashed") },
      { episodeId: "ep-9", code: "ROLE_CALL_FAILED", message: "down" },
    ]);
    expect(out.counts).toEqual({ episodes: 3, rewarded: 1, failed: 2, records: 2, skippedRecords: 0 });
  });

  it("validation errors throw by default and can exclude the episode instead", () => {
    const missing = fixed("nothing", []);
    expect(() => assignRewards([{ trajectory: t, task: null }], [missing])).toThrow(/REWARD_MISSING|no reward function/);
    const out = assignRewards([{ trajectory: t, task: null }], [missing], { onInvalid: "exclude" });
    expect(out.failures[0]).toMatchObject({ episodeId: "ep-7", code: "REWARD_MISSING" });
  });

  it("shared outcome plus format covers every trainable record", () => {
    const out = assignRewards([{ trajectory: t, task: null }], [formatReward(), sharedOutcome(() => 0.5)]);
    expect(out.episodes[0].rewards.map((r) => [r.node, r.value])).toEqual([
      ["decompose", 0.5],
      ["answer", 0.5],
    ]);
  });
});
