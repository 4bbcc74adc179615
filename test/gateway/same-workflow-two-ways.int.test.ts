// The iterative coding workflow and the same loop written as a plain `openai` agent
// (examples/agents/iterative-coding.ts), on the committed base model with the same config: greedy
// episodes make the same calls with the same prompt token counts and the same outputs, so the
// metric, the records' prompts and their text agree call for call.
import { describe, expect, it } from "vitest";
import { greedyOnSplit, untrainedCast } from "../../scripts/lib/untrained-cast.js";
import type { StepRecord } from "../../src/workflow/index.js";

const DSL = "examples/workflows/iterative-coding/workflow.ts";
const AGENT = "examples/agents/iterative-coding.ts";
const N = 6;

const calls = (records: readonly StepRecord[]) =>
  records
    .filter((r) => r.kind === "role")
    .map((r) => ({
      role: r.role,
      node: r.node,
      turn: r.turn,
      visit: r.visit,
      prompt: r.prompt,
      promptTokens: r.promptTokens,
      output: r.rawOutput,
    }));

describe("same workflow two ways", () => {
  it("greedy episodes of the DSL workflow and the SDK agent agree call for call", async () => {
    const dsl = await greedyOnSplit(await untrainedCast(DSL, undefined), DSL, "dev", N, "two-ways");
    const agent = await greedyOnSplit(await untrainedCast(AGENT, undefined), AGENT, "dev", N, "two-ways");
    expect(agent.scores).toEqual(dsl.scores);
    for (let i = 0; i < N; i++) {
      const a = calls(agent.trajectories[i].records);
      expect(a.length).toBeGreaterThanOrEqual(2);
      expect(a).toEqual(calls(dsl.trajectories[i].records));
      expect(agent.trajectories[i].metrics.formatFailures).toBe(dsl.trajectories[i].metrics.formatFailures);
    }
  }, 120_000);
});
