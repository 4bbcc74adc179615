// Runner turns line up with the reward rules: an M-ASK-shaped workflow walked with a scripted
// RoleCaller (a routing test double, not a model) and rewarded with the helpers.

import { describe, expect, it } from "vitest";
import { END, START } from "../workflow/graph-types.js";
import { workflow } from "../workflow/graph.js";
import { type SearchAction, searchOrEndParser, tagParser, textParser } from "../workflow/parsers.js";
import { defineRole } from "../workflow/role.js";
import { runEpisodes } from "../workflow/runner.js";
import { scriptedCaller } from "../workflow/scripted-caller.js";
import { append } from "../workflow/state.js";
import { defineTool } from "../workflow/tool.js";
import type { StepRecord, Trajectory } from "../workflow/trajectory.js";
import { assignRewards } from "./combine.js";
import { formatReward } from "./format.js";
import { marginalGain, perTurnScore } from "./turns.js";

interface S {
  question: string;
  answers: string[];
  knowledge: string[];
  query: string;
  evidence: string;
}

const answerRole = (name: string) =>
  defineRole<S, string>({
    name,
    prompt: (s) => `Q: ${s.question}\nK: ${s.knowledge.join("; ")}`,
    parse: tagParser("final_answer"),
    fallback: () => "0",
  });
const search = defineRole<S, SearchAction>({
  name: "search",
  prompt: (s) => `K: ${s.knowledge.join("; ")}`,
  parse: searchOrEndParser(),
  fallback: () => ({ action: "end" }),
});
const summarize = defineRole<S, string>({
  name: "summarize",
  prompt: (s) => s.evidence,
  parse: textParser(),
  fallback: () => "no useful information",
});
const update = defineRole<S, string>({ name: "update", prompt: (s) => s.evidence, parse: textParser(), fallback: () => "" });
const retriever = defineTool({ name: "retrieve", run: async (q: string) => `passages for ${q}` });

const mask = workflow<S>({ reducers: { answers: append<string>(), knowledge: append<string>() } })
  .role("plan", answerRole("plan"), { update: (a) => ({ answers: [a] }) })
  .role("search", search, { update: (a) => ({ query: a.action === "search" ? a.query : "" }) })
  .tool("retrieve", retriever, { input: (s) => s.query, update: (r) => ({ evidence: r.ok ? r.value : "" }) })
  .role("summarize", summarize, { update: (e) => ({ evidence: e }) })
  .role("update", update, { update: (k) => ({ knowledge: [k] }) })
  .role("answer", answerRole("answer"), { update: (a) => ({ answers: [a] }) })
  .edge(START, "plan")
  .edge("plan", "search")
  .branch("search", (_s, ctx) => ((ctx.output as SearchAction).action === "end" ? END : "retrieve"), ["retrieve", END])
  .edge("retrieve", "summarize")
  .edge("summarize", "update")
  .edge("update", "answer")
  .edge("answer", "search")
  .loop({ head: "search", maxTurns: 3, onLimit: END })
  .compile();

describe("M-ASK end to end (scripted RoleCaller test double)", () => {
  it("assigns F1 per turn, marginal gains and 0 for <end> on runner-produced trajectories", async () => {
    // "F1" here is the number the scripted answer carries, so the expected rewards are easy to read
    const answers: Record<string, number[]> = { short: [0.2, 0.5], long: [0.1, 0.3, 0.3, 0.6] };
    const caller = scriptedCaller((req) => {
      const script = answers[req.episodeId];
      if (req.role === "plan" || req.role === "answer") return `<final_answer>${script[req.turn]}</final_answer>`;
      if (req.role === "search") return req.turn >= script.length ? "<end>" : `<search>q${req.turn}</search>`;
      return `note ${req.turn}`;
    });
    const trajectories = await runEpisodes(
      mask,
      Object.keys(answers).map((id) => ({ id, state: { question: "?", answers: [], knowledge: [], query: "", evidence: "" } })),
      { caller },
    );
    const f1 = (t: Trajectory<S>) => t.finalState.answers.map(Number);
    const isEnd = (r: StepRecord) => (r.parsed?.ok ? (r.parsed.value as SearchAction).action === "end" : false);
    const out = assignRewards(
      trajectories.map((trajectory) => ({ trajectory, task: null })),
      [
        formatReward(),
        perTurnScore(f1, { roles: ["plan", "answer"] }),
        marginalGain(f1, { roles: ["search", "summarize", "update"], isStop: isEnd }),
      ],
    );
    expect(out.failures).toEqual([]);
    const table = (i: number) => out.episodes[i].rewards.map((r) => `${r.node}@${r.turn}=${Number((r.value as number).toFixed(6))}`);
    expect(table(0)).toEqual(["plan@0=0.2", "search@1=0.3", "summarize@1=0.3", "update@1=0.3", "answer@1=0.5", "search@2=0"]);
    expect(table(1)).toEqual([
      "plan@0=0.1",
      "search@1=0.2",
      "summarize@1=0.2",
      "update@1=0.2",
      "answer@1=0.3",
      "search@2=0",
      "summarize@2=0",
      "update@2=0",
      "answer@2=0.3",
      "search@3=0.3",
      "summarize@3=0.3",
      "update@3=0.3",
      "answer@3=0.6",
    ]);
    expect(trajectories[1].metrics.turnLimitHits).toBe(1);
  });
});
