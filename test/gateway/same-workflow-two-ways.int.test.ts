// The iterative coding workflow and the same loop written as agents — a plain `openai` chat-completions
// agent (examples/agents/iterative-coding.ts) and an `@openai/agents` agent in its default
// configuration, over the Responses API (examples/agents/iterative-coding-agents-sdk.ts) — on the
// committed base model with the same config: greedy episodes make the same calls with the same prompt
// token counts and the same outputs, so the metric, the records' prompts and their text agree call
// for call, and so do the step's metrics and the rewards the two agents give their calls.
import { beforeAll, describe, expect, it } from "vitest";
import { greedyOnSplit, untrainedCast } from "../../scripts/lib/untrained-cast.js";
import { agentReward, type AgentState } from "../../src/gateway/index.js";
import type { StepRecord, Trajectory } from "../../src/workflow/index.js";

const DSL = "examples/workflows/iterative-coding/workflow.ts";
const CHAT = "examples/agents/iterative-coding.ts";
const AGENTS_SDK = "examples/agents/iterative-coding-agents-sdk.ts";
const AGENTS = { "a chat-completions agent (openai)": CHAT, "an @openai/agents agent (Responses)": AGENTS_SDK };
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

/** The episode metrics a training step averages that do not depend on how the loop is written. */
const SAME = ["passRate", "allPass", "verifierTurns", "formatFailures", "roleCalls", "promptTokens", "outputTokens"];
const same = (m: Readonly<Record<string, number>>) => Object.fromEntries(SAME.map((k) => [k, m[k]]));
/** Those metrics averaged over the episodes, as a step reports them. */
const stepMetrics = (t: { trajectories: { metrics: Readonly<Record<string, number>> }[] }) =>
  Object.fromEntries(SAME.map((k) => [k, t.trajectories.reduce((sum, e) => sum + e.metrics[k], 0) / t.trajectories.length]));

/** The reward each call of an agent episode trains on, by its place in the loop. */
const callRewards = (t: Trajectory<object>) => {
  const byIndex = new Map(t.records.map((r) => [r.index, r]));
  return agentReward()
    .fn(t as Trajectory<AgentState>, undefined as never)
    .map((e) => ({
      node: byIndex.get(e.recordIndex)?.node,
      turn: byIndex.get(e.recordIndex)?.turn,
      reward: "skip" in e ? "skip" : e.value,
    }));
};

const greedy = async (file: string) => greedyOnSplit(await untrainedCast(file, undefined), file, "dev", N, "two-ways");

describe("same workflow three ways", () => {
  let dsl: Awaited<ReturnType<typeof greedy>>;
  const agents = new Map<string, Awaited<ReturnType<typeof greedy>>>();
  beforeAll(async () => {
    dsl = await greedy(DSL);
  }, 120_000);

  for (const [name, file] of Object.entries(AGENTS))
    it(`greedy episodes of the DSL workflow and ${name} agree call for call`, async () => {
      const agent = await greedy(file);
      agents.set(file, agent);
      expect(agent.scores).toEqual(dsl.scores);
      for (let i = 0; i < N; i++) {
        const a = calls(agent.trajectories[i].records);
        expect(a.length).toBeGreaterThanOrEqual(2);
        expect(a).toEqual(calls(dsl.trajectories[i].records));
        expect(same(agent.trajectories[i].metrics)).toEqual(same(dsl.trajectories[i].metrics));
      }
      // the step's metrics, as the dashboard shows them
      expect(stepMetrics(agent)).toEqual(stepMetrics(dsl));
    }, 120_000);

  it("the @openai/agents agent rewards every call as the chat-completions agent does", () => {
    const [chat, sdk] = [agents.get(CHAT), agents.get(AGENTS_SDK)];
    if (!chat || !sdk) throw new Error("the agents' episodes did not run");
    for (let i = 0; i < N; i++) {
      const expected = callRewards(chat.trajectories[i]);
      expect(expected).toHaveLength(chat.trajectories[i].metrics.roleCalls);
      expect(callRewards(sdk.trajectories[i])).toEqual(expected);
    }
  });
});
