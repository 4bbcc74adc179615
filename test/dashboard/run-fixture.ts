// Test helper: builds a real run directory the way a training run writes it: a tiny
// decompose -> parallel retrieve -> answer workflow walked by the real runner (roles answered by
// the scripted test double), rewards from src/rewards, trajectories and rewards through the real
// writers, and per-role metrics.jsonl lines (optionally with the update figures, timings and
// warnings a trainer's row carries, and an LLM judge's verdicts, reward and stats). Test code only.
import { writeEffectiveConfig } from "../../src/config/load-config.js";
import { f1Score } from "../../src/envs/index.js";
import { openMetricsWriter } from "../../src/progress/metrics-writer.js";
import { appendRewards } from "../../src/progress/reward-writer.js";
import { roleRows } from "../../src/progress/role-rows.js";
import { assignRewards } from "../../src/rewards/combine.js";
import { formatReward } from "../../src/rewards/format.js";
import { judgedEntries, ruleStats } from "../../src/rewards/judged-entries.js";
import { judgementsOf } from "../../src/rewards/model-rules.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import type { AdvantageStats } from "../../src/runtime/protocol/messages.js";
import { meanMetrics, roleMetrics } from "../../src/runtime/controller/step-metrics.js";
import type { RoleUpdates } from "../../src/runtime/controller/update-phase.js";
import {
  END,
  START,
  appendTrajectories,
  defineRole,
  defineTool,
  jsonStringListParser,
  runEpisodes,
  scriptedCaller,
  tagParser,
  workflow,
} from "../../src/workflow/index.js";
import type { JudgeRecord, Trajectory } from "../../src/workflow/trajectory.js";

interface State {
  question: string;
  gold: string;
  subQueries: string[];
  passages: string[];
  answer: string;
}
type Task = { id: string; question: string; gold: string };

const decompose = defineRole<State, string[]>({
  name: "decompose",
  prompt: (s) => [{ role: "user", content: `Split into 1-3 search queries, as a JSON list:\n${s.question}` }],
  parse: jsonStringListParser({ minItems: 1, maxItems: 3 }),
  fallback: () => [],
});
const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => [
    { role: "system", content: "Answer inside <final_answer> tags." },
    { role: "user", content: `${s.passages.join("\n")}\nQuestion: ${s.question}` },
  ],
  parse: tagParser("final_answer"),
  fallback: () => "",
});
const DOCS: Record<string, string> = {
  "capital of Arvel": "Lorin is the capital of Arvel.",
  "river of Lorin": "The Sal river runs through Lorin.",
};
const search = defineTool<string, string[]>({ name: "retriever", run: (q) => (DOCS[q] ? [DOCS[q]] : []) });

export const fixtureWorkflow = workflow<State>({ name: "qd-retrieve-answer", reducers: { passages: (a, b) => [...a, ...b] } })
  .role("decompose", decompose, { update: (qs) => ({ subQueries: qs }) })
  .tool("retrieve", search, { input: (_s, ctx) => String(ctx.item), update: (r) => ({ passages: r.ok ? r.value : [] }) })
  .fn("join", () => ({}))
  .role("answer", answer, { update: (a) => ({ answer: a }) })
  .edge(START, "decompose")
  .fanOut("decompose", { over: (s) => s.subQueries, branch: "retrieve", join: "join" })
  .edge("join", "answer")
  .edge("answer", END)
  .compile();

const TASKS: Task[] = [
  { id: "t0", question: "Which river runs through the capital of Arvel?", gold: "Sal" },
  { id: "t1", question: "What is the capital of Arvel?", gold: "Lorin" },
];

export interface FixtureOptions {
  /** steps the answers lag behind: episode ep-i is correct from step i + 1 + lag */
  lag?: number;
  /** dev eval: after the last step, plus the eval before training as a step-0 row or as summary.json `before` */
  eval?: "step-0-row" | "summary-before" | "no-before";
  /** eval metric at every step from 0 (index = step; a step-0 row with no roles), instead of `eval` */
  evals?: readonly number[];
  /** rows shaped like a trainer's: advantage and update figures, episode counts, tokens, timings, a warning */
  training?: boolean;
  /** config fields besides name, models and cast */
  config?: Record<string, unknown>;
  /** a "judge" rule's verdicts in the trajectories (ep-3's call fails at step 1), its reward and its judges.judge stats */
  judged?: boolean;
}

export const JUDGE_FAILURE = "no <score>…</score> in the answer";

/**
 * One verdict of the fixture's judge on episode `ep`, as judgeReward records it: right answers get 1,
 * wrong ones 0, except ep-3, whose wrong answer fools it (0.8), and whose call fails at step 1.
 */
function verdict(t: Trajectory<State>, ep: number, step: number, gold: string): JudgeRecord {
  const correct = t.finalState.answer === gold;
  const input = [
    { role: "system" as const, content: "You are a strict judge. Score the candidate from 0 to 1. Answer with <score>x</score>." },
    { role: "user" as const, content: `Reference:\nGold answer: ${gold}\n\n<candidate>\n${t.finalState.answer}\n</candidate>` },
  ];
  const base = { rule: "judge", mode: "trajectory" as const, recordIndex: null, group: null, judge: "model:judge", input };
  const metric = correct ? 1 : 0;
  // a greedy judge answers a repeated input from its cache: one more hit each step
  const cached = ep < step - 1;
  if (ep === 3 && step === 1)
    return { ...base, output: "the answer looks right", score: null, error: JUDGE_FAILURE, cached, metric, ms: 40 };
  const score = correct ? 1 : ep === 3 ? 0.8 : 0;
  return { ...base, output: `<score>${score}</score>`, score, error: null, cached, metric, ms: 40 };
}

/** Appends the judge's verdicts to a step's trajectories (before rewards, as the reward phase does); returns the row's judges. */
function judgeStep(trajectories: Trajectory<State>[], step: number) {
  trajectories.forEach((t, i) => {
    t.judgements = [verdict(t, i, step, TASKS[i % 2].gold)];
  });
  const all = trajectories.flatMap((t) => judgementsOf(t, "judge"));
  const cacheHits = all.filter((j) => j.cached).length;
  const stats = ruleStats(all, { calls: all.length - cacheHits, cacheHits });
  // as src/run/step-row.ts writes them: non-finite figures left out
  return { judge: Object.fromEntries(Object.entries(stats).filter(([, v]) => Number.isFinite(v))) };
}

/** The reward judgeReward gives from the verdicts: the answer record, 0 where the judge failed. */
const judgeRewardFn = {
  name: "judge",
  fn: (t: Trajectory<State>) => judgedEntries(t, judgementsOf(t, "judge"), { kind: "judge", roles: ["answer"], onFailure: { value: 0 } }),
};

/** Advantage and update figures of `role` at `step`: whitened advantages (std 1 to float precision), slowly falling entropy. */
function trainingFigures(roles: readonly string[], step: number): { adv: Record<string, AdvantageStats>; upd: RoleUpdates } {
  const adv: Record<string, AdvantageStats> = {};
  const upd: RoleUpdates = {};
  roles.forEach((role, r) => {
    adv[role] = { samples: 4, advantageMean: 1e-9 * ((step % 3) - 1), advantageStd: 1 - 3e-8 * (step % 2), returnMean: 0.1 * step };
    const policy = {
      samples: 4,
      responseLength: 9 + 0.3 * step + r,
      entropy: 1.9 - 0.08 * step - 0.1 * r,
      klRef: 0.0012 * step,
      pgLoss: -0.01 * step,
      clipFrac: 0.02 + 0.01 * ((step + r) % 3),
      approxKl: 0.0004 * step + 0.0001 * r,
      gradNorm: 0.8 + 0.15 * ((step + r) % 4),
      valueLoss: Number.NaN,
      explainedVariance: Number.NaN,
      minibatches: 2,
      skippedMinibatches: 0,
    };
    upd[role] = { policy };
  });
  return { adv, upd };
}

/** The wall-clock part of a trainer's row (src/run/step-row.ts), made up but in its shape. */
function timings(step: number, tokens: number) {
  const stepMs = 4000 + 350 * (step % 3);
  return {
    stepMs,
    generationMs: 2900 + 300 * (step % 3),
    controllerMs: 120 + 10 * (step % 2),
    episodesPerSecond: 4 / (stepMs / 1000),
    tokensPerSecond: tokens / (stepMs / 1000),
    phases: { rollout: 3100 + 300 * (step % 3), rewards: 12, logprobs: 240, advantages: 6, update: 640 + 40 * (step % 2) },
    episodes: { durationMs: 760 + 20 * step },
  };
}

/** Writes `steps` training steps of 4 episodes each (episodes ep-0..ep-3, one more correct each step) into runDir. */
export async function buildRunDir(runDir: string, steps = 3, opts: FixtureOptions = {}): Promise<void> {
  const lag = opts.lag ?? 0;
  await writeEffectiveConfig(runDir, {
    name: "dashboard-fixture",
    models: { shared: { preset: "tiny" } },
    cast: { decompose: "shared", answer: "shared" },
    ...opts.config,
  });
  const metrics = openMetricsWriter(runDir);
  // a step-0 row holds the eval before training and nothing else (no roles, no timings)
  if (opts.evals) metrics.write({ step: 0, eval: { metric: opts.evals[0], episodes: 32 } });
  else if (opts.eval === "step-0-row") metrics.write({ step: 0, eval: { metric: 0.05, episodes: 2 } });
  const rewardFns = [
    formatReward({ weight: 1 }),
    sharedOutcome<Task, State>((t, task) => f1Score(t.finalState.answer, [task.gold])),
    ...(opts.judged ? [judgeRewardFn] : []),
  ];
  for (let step = 1; step <= steps; step++) {
    // later steps answer better: the curves go up
    const caller = scriptedCaller((req) => {
      const ep = Number(req.episodeId.split("-")[1]);
      if (req.role === "decompose")
        return ep === 3 && step === 1 ? "capital of Arvel, river" : JSON.stringify(["capital of Arvel", "river of Lorin"]);
      return `<final_answer>${ep < step - lag ? TASKS[ep % 2].gold : "unknown"}</final_answer>`;
    });
    const episodes = Array.from({ length: 4 }, (_, i) => {
      const task = TASKS[i % 2];
      return {
        id: `ep-${i}`,
        taskId: task.id,
        state: { question: task.question, gold: task.gold, subQueries: [], passages: [], answer: "" },
      };
    });
    const trajectories = await runEpisodes(fixtureWorkflow, episodes, { caller });
    const judges = opts.judged ? { judges: judgeStep(trajectories, step) } : {};
    const assigned = assignRewards(
      trajectories.map((t, i) => ({ trajectory: t, task: TASKS[i % 2] })),
      rewardFns,
    );
    await appendTrajectories(runDir, step, trajectories);
    await appendRewards(runDir, step, assigned.episodes);
    const evalRow = opts.evals
      ? { eval: { metric: opts.evals[step], episodes: 32 } }
      : opts.eval && step === steps
        ? { eval: { metric: evalMetric(step, lag), episodes: 2 } }
        : {};
    if (!opts.training) {
      metrics.write({
        step,
        episodes: trajectories.length,
        roles: roleRows(roleMetrics(trajectories, assigned, {}, {})),
        ...judges,
        ...evalRow,
      });
      continue;
    }
    const { adv, upd } = trainingFigures(["decompose", "answer"], step);
    let tokens = 0;
    for (const t of trajectories) for (const r of t.records) tokens += (r.promptTokens ?? 0) + (r.outputTokens ?? 0);
    const episodeMetrics = Object.fromEntries(
      Object.entries(meanMetrics(trajectories.map((t) => t.metrics))).filter(([k]) => !k.endsWith("Ms")),
    );
    // from step 5 on every episode answers right: no group's rewards differ, as the trainer warns
    const warnings =
      step > 4 + lag
        ? [
            {
              code: "NO_SIGNAL",
              message: `step ${step}: no group's rewards differ`,
              hint: "raise sampling.temperature or algorithm.groupSize",
            },
          ]
        : [];
    metrics.write({
      step,
      epoch: 0,
      episodes: { count: 4, rewarded: 4, failed: 0, metrics: episodeMetrics },
      tokens,
      roles: roleRows(roleMetrics(trajectories, assigned, adv, upd)),
      ...(warnings.length > 0 && { warnings }),
      ...judges,
      timings: timings(step, tokens),
      ...evalRow,
    });
  }
  const evalSummary = opts.eval
    ? {
        finalEval: evalMetric(steps, lag),
        best: { step: steps, metric: evalMetric(steps, lag), split: "dev" },
        ...(opts.eval === "summary-before" ? { before: 0.1 } : {}),
      }
    : {};
  await metrics.summary({ kind: "train", steps, startStep: 0, wallSeconds: 75.5, ...evalSummary });
}

/** The fixture's dev metric after `step` steps: the fraction of the 4 episodes answered correctly. */
export const evalMetric = (step: number, lag = 0): number => Math.max(0, Math.min(4, step - lag)) / 4;
