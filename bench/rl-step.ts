// `npm run bench:rl-step`: one LoRA RL step at the full Qwen2.5-0.5B shape (random weights, the real
// Qwen3 tokenizer's vocabulary) — 16 episodes of a two-role workflow (drafter → reviser), 128 new
// tokens per role call, one adapter per role on a shared base, GRPO — in fp32 and in bf16, each in
// its own process so peak RSS is that precision's. Prints one JSON line per precision: wall time of
// the step, its phase split (rollout, logprobs, advantages, update), peak RSS, and the peak RSS within
// each phase (sampled from a worker thread; the model's own memory is in every phase's figure).
// The model has no KL reference, as `maso train` runs GRPO without a KL term (klCoef 0).
// Env: MASO_BENCH_PRECISIONS (default fp32,bf16), MASO_BENCH_EPISODES (16), MASO_BENCH_TOKENS (128),
// MASO_BENCH_BUDGET_MB (the update's activationBudgetMb, default the trainer's).
import { fileURLToPath } from "node:url";
import { loadHfTokenizer, qwen3TokenizerDir } from "../src/engine/tokenizer/hf-tokenizer.js";
import { sharedOutcome } from "../src/rewards/outcome.js";
import { DEFAULT_TRAINER } from "../src/rl/update/config.js";
import { adapterPerRole, createRuntime } from "../src/runtime/index.js";
import { END, START } from "../src/workflow/graph-types.js";
import { workflow } from "../src/workflow/graph.js";
import { textParser } from "../src/workflow/parsers.js";
import { defineRole } from "../src/workflow/role.js";
import { childRow } from "./child-row.js";
import { startRssSampler } from "./rss-sampler.js";
import { BENCH_SHAPES } from "./shapes.js";
import { machine } from "./machine.js";

type Precision = "fp32" | "bf16";
const SHAPE = "qwen2.5-0.5b";

async function oneStep(precision: Precision) {
  const episodes = Number(process.env.MASO_BENCH_EPISODES ?? 16);
  const maxNewTokens = Number(process.env.MASO_BENCH_TOKENS ?? 128);
  const budgetMb = process.env.MASO_BENCH_BUDGET_MB ? Number(process.env.MASO_BENCH_BUDGET_MB) : undefined;
  interface S {
    q: string;
    draft: string;
    answer: string;
  }
  const role = (name: string, prompt: (s: S) => string) =>
    defineRole<S, string>({
      name,
      prompt: (s) => [{ role: "user", content: prompt(s) }],
      parse: textParser(),
      fallback: () => "",
      maxNewTokens,
    });
  const wf = workflow<S>({ name: "bench-rl-step" })
    .role(
      "draft",
      role("drafter", (s) => `Answer briefly: ${s.q}`),
      { update: (draft) => ({ draft }) },
    )
    .role(
      "revise",
      role("reviser", (s) => `Question: ${s.q}\nDraft: ${s.draft}\nImprove the draft.`),
      { update: (answer) => ({ answer }) },
    )
    .edge(START, "draft")
    .edge("draft", "revise")
    .edge("revise", END)
    .compile();
  const tokenizer = await loadHfTokenizer(qwen3TokenizerDir());
  const rt = await createRuntime<S, string>({
    workflow: wf,
    models: [
      {
        name: "base",
        source: { config: { ...BENCH_SHAPES[SHAPE], maxPositionEmbeddings: 1024 }, seed: 1 },
        lora: { rank: 16, alpha: 32, targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] },
        tokenizer,
        precision,
        reference: "none",
      },
    ],
    cast: adapterPerRole("base", ["drafter", "reviser"]),
    rewards: [sharedOutcome((t, task: string) => (t.finalState.answer.length % 7 === Number(task) ? 1 : 0))],
    advantage: { estimator: "grpo" },
    trainer: { lr: 1e-4, epochs: 1, activationBudgetMb: budgetMb },
  });
  const batch = Array.from({ length: episodes }, (_, i) => ({
    episode: { id: `e${i}`, state: { q: `What is ${i % 4} plus ${i % 3}?`, draft: "", answer: "" }, taskId: `t${i % 4}` },
    task: String(i % 7),
  }));
  const rss = startRssSampler();
  const start = Date.now();
  const t0 = performance.now();
  const r = await rt.controller.step(batch);
  const wall = (performance.now() - t0) / 1000;
  const p = r.timings.phases;
  // the step's phases run one after another: their durations mark their windows
  const byPhase: Record<string, number | null> = {};
  let at = start;
  for (const phase of ["rollout", "rewards", "logprobs", "advantages", "update"]) {
    byPhase[phase] = rss.peakMb(at, at + (p[phase] ?? 0));
    at += p[phase] ?? 0;
  }
  await rss.stop();
  const s = (ms: number | undefined) => Number(((ms ?? 0) / 1000).toFixed(2));
  return {
    bench: "rl-step",
    shape: SHAPE,
    precision,
    machine: machine(),
    episodes,
    max_new_tokens: maxNewTokens,
    activation_budget_mb: budgetMb ?? DEFAULT_TRAINER.activationBudgetMb,
    tokens: r.trajectories.reduce((a, t) => a + (t.metrics.outputTokens ?? 0) + (t.metrics.promptTokens ?? 0), 0),
    wall_s: Number(wall.toFixed(2)),
    phases_s: { rollout: s(p.rollout), rewards: s(p.rewards), logprobs: s(p.logprobs), advantages: s(p.advantages), update: s(p.update) },
    generation_s: s(r.timings.generationMs),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    peak_rss_mb_by_phase: byPhase,
    threads: Number(process.env.MASO_THREADS ?? 0) || undefined,
  };
}

const child = process.argv.indexOf("--precision");
if (child >= 0) {
  console.log(JSON.stringify(await oneStep(process.argv[child + 1] as Precision)));
} else {
  const self = fileURLToPath(import.meta.url);
  for (const precision of (process.env.MASO_BENCH_PRECISIONS ?? "fp32,bf16").split(",")) {
    console.log(childRow(self, ["--precision", precision], { bench: "rl-step", shape: SHAPE, precision }));
  }
}
