// The paper's reward rules on hand-built trajectories, computed with each module's own `rewards`:
// QD / Retrieve-Extract-Answer share the answer F1 with every role and keep format terms local;
// M-ASK gives plan F1(a_0), answer F1(a_t), search/summarize/update F1(a_t) − F1(a_{t−1}), <end> 0.
import { describe, expect, it } from "vitest";
import * as iterative from "../../examples/workflows/iterative-search/workflow.js";
import * as qd from "../../examples/workflows/qd-retrieve-answer/workflow.js";
import * as rea from "../../examples/workflows/retrieve-extract-answer/workflow.js";
import { weightedRewards } from "../../src/run/runtime-options.js";
import type { QaTask } from "../../src/envs/index.js";
import { combineRewards } from "../../src/rewards/combine.js";
import { rec, traj } from "../../src/rewards/test-trajectories.js";
import type { StepRecord, Trajectory } from "../../src/workflow/index.js";

// F1 against "Lizal Vaistan": "Trestul" 0, "Lizal" 2/3, "Lizal Vaistan" 1
const task: QaTask = { id: "qa-x", question: "Where?", answers: ["Lizal Vaistan"] };
const malformed = { ok: false as const, reason: "no <final_answer>…</final_answer> block", fallback: "" };

const withState = <S>(records: StepRecord[], finalState: S): Trajectory<S> => ({ ...traj(records), finalState }) as Trajectory<S>;

/** Total reward and per-source parts of every rewarded record, keyed node@turn#visit. */
function rewardsOf<S>(t: Trajectory<S>, rewards: Parameters<typeof combineRewards<QaTask, S>>[2]) {
  const out = combineRewards(t, task, rewards);
  expect(out.skipped).toEqual([]);
  const round = (v: number) => Math.round(v * 1e9) / 1e9;
  return Object.fromEntries(
    out.rewards.map((r) => [
      `${r.node}@${r.turn}#${r.visit}`,
      { total: round(r.value as number), ...Object.fromEntries(Object.entries(r.bySource).map(([k, v]) => [k, round(v)])) },
    ]),
  );
}

describe("QD-Retrieve-Answer: local format, global correctness", () => {
  const records = [
    rec({ node: "decompose", parsed: { ok: false, reason: "no JSON list found", fallback: [] } }),
    rec({ node: "retrieve", kind: "tool" }),
    rec({ node: "join", kind: "function" }),
    rec({ node: "answer" }),
  ];
  const t = withState<qd.State>(records, { ...qd.initialState(task), answer: "Lizal" });

  it("gives both roles the answer F1 and the malformed decompose its own −1", () => {
    expect(rewardsOf(t, qd.rewards)).toEqual({
      "decompose@0#0": { total: round(2 / 3 - 1), format: -1, "answer-f1": round(2 / 3) },
      "answer@0#0": { total: round(2 / 3), format: 0, "answer-f1": round(2 / 3) },
    });
  });

  it("scales the format term by rewardWeights.format", () => {
    const out = combineRewards(t, task, weightedRewards(qd.rewards, { format: 0.5 }));
    expect(out.rewards.map((r) => r.bySource.format)).toEqual([-0.5, 0]);
  });
});

describe("Retrieve-Extract-Answer: the same rule over three roles", () => {
  it("shares the F1 with decompose, every extract and answer; a malformed extract pays alone", () => {
    const records = [
      rec({ node: "decompose" }),
      rec({ node: "retrieve", kind: "tool", branch: 0 }),
      rec({ node: "extract", branch: 0 }),
      rec({ node: "retrieve", kind: "tool", branch: 1 }),
      rec({ node: "extract", branch: 1, parsed: { ok: false, reason: "empty output", fallback: "no useful information" } }),
      rec({ node: "join", kind: "function" }),
      rec({ node: "answer" }),
    ];
    const t = withState<rea.State>(records, { ...rea.initialState(task), answer: "Lizal Vaistan" });
    expect(rewardsOf(t, rea.rewards)).toEqual({
      "decompose@0#0": { total: 1, format: 0, "answer-f1": 1 },
      "extract@0#0": { total: 1, format: 0, "answer-f1": 1 },
      "extract@0#1": { total: 0, format: -1, "answer-f1": 1 },
      "answer@0#0": { total: 1, format: 0, "answer-f1": 1 },
    });
  });
});

describe("iterative search (M-ASK): per-turn score and marginal gain", () => {
  const search = (turn: number, value: unknown) => rec({ node: "search", turn, parsed: { ok: true, value } });
  const turn = (t: number, summarize: Partial<StepRecord> = {}) => [
    search(t, { action: "search", query: `q${t}` }),
    rec({ node: "retrieve", kind: "tool", turn: t }),
    rec({ node: "summarize", turn: t, ...summarize }),
    rec({ node: "update", turn: t }),
    rec({ node: "answer", turn: t }),
  ];
  // a_0 = "Trestul" (F1 0), a_1 = "Lizal" (2/3), a_2 = "Lizal Vaistan" (1), then <end> at turn 3
  const records = [
    rec({ node: "plan" }),
    ...turn(1),
    ...turn(2, { parsed: { ok: false, reason: "empty output", fallback: "no useful information" } }),
    search(3, { action: "end" }),
  ];
  const answers = ["Trestul", "Lizal", "Lizal Vaistan"];
  const t = withState<iterative.State>(records, { ...iterative.initialState(task), answers, answer: answers[2] });
  const gain1 = round(2 / 3);
  const gain2 = round(1 / 3);

  it("follows the paper's rule exactly, with format terms on top", () => {
    const r = rewardsOf(t, iterative.rewards);
    const shared = (g: number) => ({ total: g, format: 0, "marginal-gain": g });
    expect(r).toEqual({
      "plan@0#0": { total: 0, format: 0, "answer-f1": 0 },
      "search@1#0": shared(gain1),
      "summarize@1#0": shared(gain1),
      "update@1#0": shared(gain1),
      "answer@1#0": { total: gain1, format: 0, "answer-f1": gain1 },
      "search@2#1": shared(gain2),
      "summarize@2#1": { total: round(gain2 - 1), format: -1, "marginal-gain": gain2 },
      "update@2#1": shared(gain2),
      "answer@2#1": { total: 1, format: 0, "answer-f1": 1 },
      "search@3#2": { total: 0, format: 0, "marginal-gain": 0 },
    });
  });

  it("gives plan its own F1 and a malformed plan its −1", () => {
    const planOnly = withState<iterative.State>([rec({ node: "plan", parsed: malformed }), search(1, { action: "end" })], {
      ...iterative.initialState(task),
      answers: [""],
    });
    expect(rewardsOf(planOnly, iterative.rewards)).toEqual({
      "plan@0#0": { total: -1, format: -1, "answer-f1": 0 },
      "search@1#0": { total: 0, format: 0, "marginal-gain": 0 },
    });
  });
});

function round(v: number): number {
  return Math.round(v * 1e9) / 1e9;
}
