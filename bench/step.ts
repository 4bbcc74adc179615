// Benchmark (not a test): a few RL steps of a two-role workflow (writer → lookup tool → answerer) on
// tiny engine models, one worker group per role. Prints JSON: time per phase, bytes crossing the
// controller↔worker boundary per step, worker busy fractions and the generator's mean batch size.
// Target: controller + reward bookkeeping <= 3 % of step time. Run: npx tsx bench/step.ts [steps] [episodes]
import { BYTE_VOCAB_SIZE } from "../src/engine/tokenizer/byte-tokenizer.js";
import { formatReward } from "../src/rewards/format.js";
import { sharedOutcome } from "../src/rewards/outcome.js";
import { byGroup, createRuntime, type StepReport } from "../src/runtime/index.js";
import { END, START } from "../src/workflow/graph-types.js";
import { workflow } from "../src/workflow/graph.js";
import { textParser } from "../src/workflow/parsers.js";
import { defineRole } from "../src/workflow/role.js";
import { defineTool } from "../src/workflow/tool.js";
import type { Trajectory } from "../src/workflow/trajectory.js";
import { machine } from "./machine.js";

interface S {
  q: string;
  note: string;
  doc: string;
  answer: string;
}

const steps = Number(process.argv[2] ?? 4);
const episodes = Number(process.argv[3] ?? 32);
const maxNewTokens = 16;
const config = {
  architecture: "llama" as const,
  vocabSize: BYTE_VOCAB_SIZE,
  hiddenSize: 64,
  intermediateSize: 128,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 16,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  qkvBias: false,
  oBias: false,
  qkNorm: false,
  maxPositionEmbeddings: 256,
};

const lookup = defineTool({ name: "lookup", timeoutMs: 1000, run: async (q: string) => `doc about ${q.slice(0, 12)}` });
const wf = workflow<S>({ name: "bench-two-role" })
  .role(
    "write",
    defineRole<S, string>({
      name: "writer",
      prompt: (s) => [{ role: "user", content: s.q }],
      parse: textParser(),
      fallback: () => "",
      maxNewTokens,
    }),
    { update: (note) => ({ note }) },
  )
  .tool("lookup", lookup, { input: (s) => s.note, update: (r) => ({ doc: r.ok ? r.value : "" }) })
  .role(
    "answer",
    defineRole<S, string>({
      name: "answerer",
      prompt: (s) => [{ role: "user", content: `${s.q}\n${s.doc}` }],
      parse: textParser(),
      fallback: () => "",
      maxNewTokens,
    }),
    { update: (answer) => ({ answer }) },
  )
  .edge(START, "write")
  .edge("write", "lookup")
  .edge("lookup", "answer")
  .edge("answer", END)
  .compile();

const rt = await createRuntime<S, string>({
  workflow: wf,
  models: [
    { name: "writer-model", source: { config, seed: 1 } },
    { name: "answerer-model", source: { config, seed: 2 } },
  ],
  cast: byGroup({ "writer-model": ["writer"], "answerer-model": ["answerer"] }),
  rewards: [formatReward({ weight: 0.1 }), sharedOutcome((t: Trajectory<S>, task: string) => (t.finalState.answer.includes(task) ? 1 : 0))],
  advantage: { estimator: "grpo" },
  trainer: { lr: 1e-4, epochs: 1 },
});

const batch = (step: number) =>
  Array.from({ length: episodes }, (_, i) => ({
    episode: { id: `s${step}-e${i}`, state: { q: `question ${i % 8}?`, note: "", doc: "", answer: "" }, taskId: `t${i % 8}` },
    task: String.fromCharCode(97 + (i % 8)),
  }));

const reports: StepReport<S>[] = [];
await rt.controller.step(batch(-1)); // warm-up, not measured
for (let s = 0; s < steps; s++) reports.push(await rt.controller.step(batch(s)));

const mean = (f: (r: StepReport<S>) => number) => reports.reduce((a, r) => a + f(r), 0) / reports.length;
const stepMs = mean((r) => r.timings.stepMs);
const controllerMs = mean((r) => r.timings.controllerMs);
const groups = Object.keys(reports[0].workers);
const round = (x: number, d = 2) => Number(x.toFixed(d));
console.log(
  JSON.stringify(
    {
      bench: "step",
      machine: machine(),
      model: { hiddenSize: config.hiddenSize, numLayers: config.numLayers, vocabSize: config.vocabSize },
      steps,
      episodesPerStep: episodes,
      roleCallsPerStep: mean((r) => r.trajectories.reduce((a, t) => a + t.metrics.roleCalls, 0)),
      ms: {
        step: round(stepMs),
        rolloutWall: round(mean((r) => r.timings.phases.rollout)),
        generation: round(mean((r) => r.timings.generationMs)),
        tools: round(mean((r) => r.timings.toolsMs)),
        rewards: round(mean((r) => r.timings.phases.rewards)),
        controllerBookkeeping: round(controllerMs),
        advantage: round(mean((r) => r.timings.phases.advantages)),
        update: round(mean((r) => r.timings.phases.update)),
        controllerParts: {
          routing: round(mean((r) => r.timings.phases.routing ?? 0)),
          messageCodec: round(mean((r) => r.traffic.codecMs)),
          rewardBookkeeping: round(mean((r) => r.timings.phases.rewardBookkeeping ?? 0)),
          metrics: round(mean((r) => r.timings.phases.bookkeeping ?? 0)),
        },
      },
      bytesPerStep: {
        toWorkers: round(
          mean((r) => r.traffic.bytesToWorkers),
          0,
        ),
        toController: round(
          mean((r) => r.traffic.bytesToController),
          0,
        ),
        messages: round(
          mean((r) => r.traffic.messages),
          0,
        ),
      },
      workers: Object.fromEntries(
        groups.map((g) => [
          g,
          {
            busyFraction: round(
              mean((r) => r.workers[g].busyFraction),
              3,
            ),
            meanGeneratorBatch: round(mean((r) => r.workers[g].meanBatch)),
            busyMs: Object.fromEntries(
              Object.keys(reports[0].workers[g].busyMs).map((k) => [k, round(mean((r) => r.workers[g].busyMs[k] ?? 0))]),
            ),
          },
        ]),
      ),
      controllerFraction: round(controllerMs / stepMs, 4),
      target: { controllerFractionMax: 0.03, met: controllerMs / stepMs <= 0.03 },
    },
    null,
    2,
  ),
);
