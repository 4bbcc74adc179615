// `npm run bench:engine`: training-step throughput (forward + backward + AdamW) of maso's engine
// in fp32 and bf16, against PyTorch fp32 and PyTorch bf16 autocast, on the same shapes and thread
// count, side by side in one run; MFU against a GEMM peak of the same precision measured here;
// peak RSS, and RSS drift over repeated steps (leak check on the tiny shape).
// Prints one JSON object per (shape, precision). Env: MASO_BENCH_SHAPES (default
// tiny,small,qwen0.5b-layers,qwen2.5-0.5b,qwen3-0.6b), MASO_BENCH_PRECISIONS (default fp32,bf16),
// MASO_BENCH_STEPS, MASO_BENCH_LEAK=0 to skip the leak check. `phases_s` splits maso's step: each
// phase's median over the timed steps (so they need not add up to the step's median exactly). Each (shape, precision) runs in a
// child process, so its peak RSS is its own.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelConfig } from "../src/engine/config.js";
import { Decoder } from "../src/engine/model/decoder.js";
import { createAdamW } from "../src/engine/optim/adamw.js";
import { native } from "../src/native/binding.js";
import { childRow } from "./child-row.js";
import { BENCH_SHAPES } from "./shapes.js";
import { machine } from "./machine.js";
import { median } from "./median.js";

const here = dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.MASO_TORCH_PYTHON ?? "/usr/bin/python3";

interface Shape {
  name: string;
  config: ModelConfig;
  batch: number;
  seqLen: number;
}

const SHAPES: Shape[] = [
  { name: "tiny", config: BENCH_SHAPES.tiny, batch: 4, seqLen: 256 },
  { name: "small", config: BENCH_SHAPES.small, batch: 4, seqLen: 256 },
  { name: "qwen0.5b-layers", config: BENCH_SHAPES["qwen0.5b-layers"], batch: 2, seqLen: 512 },
  { name: "qwen2.5-0.5b", config: BENCH_SHAPES["qwen2.5-0.5b"], batch: 2, seqLen: 256 },
  { name: "qwen3-0.6b", config: BENCH_SHAPES["qwen3-0.6b"], batch: 2, seqLen: 256 },
];
type Precision = "fp32" | "bf16";

/** Training FLOPs per step: 6 per weight per token for every matmul (incl. LM head) + causal attention. */
function trainFlops(s: Shape): number {
  const c = s.config;
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  const perLayer = c.hiddenSize * (2 * q + 2 * kv) + 3 * c.hiddenSize * c.intermediateSize;
  const matmulParams = c.numLayers * perLayer + c.vocabSize * c.hiddenSize;
  const tokens = s.batch * s.seqLen;
  const attn = 3 * c.numLayers * s.batch * 2 * s.seqLen * s.seqLen * q; // QK^T + PV over the causal half, x3 for backward
  return 6 * matmulParams * tokens + attn;
}

/**
 * The best of 30 square 1024 GEMMs through maso's GEMM dispatch at the current precision: on the
 * Zen 4 VM the bf16 product ran at half speed for its first 10-15 calls in a process (both oneDNN
 * kernels), so a best of 5 measured the warm-up, not the peak.
 */
function gemmPeakGflops(): number {
  const kernels = native();
  const n = 1024;
  const a = new Float32Array(n * n).fill(0.5);
  const b = new Float32Array(n * n).fill(0.25);
  const c = new Float32Array(n * n);
  kernels.matmulForward(c, a, b, null, n, n, n, false);
  let best = 0;
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    kernels.matmulForward(c, a, b, null, n, n, n, false);
    const s = (performance.now() - t0) / 1000;
    best = Math.max(best, (2 * n * n * n) / s / 1e9);
  }
  return best;
}

function benchMaso(s: Shape, precision: Precision, warmup: number, steps: number) {
  const model = new Decoder(s.config, undefined, { seed: 1, trainBase: true });
  model.precision = precision;
  const opt = createAdamW([{ name: "base", params: model.params, grads: model.grads! }], { lr: 1e-4 });
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % s.config.vocabSize) | 0;
  const seqs = Array.from({ length: s.batch }, () => ({ tokens: Array.from({ length: s.seqLen }, rand) }));
  const times: number[] = [];
  const phases: number[][] = [[], [], [], []]; // zero_grad, forward, backward, optimizer
  const rss: number[] = [];
  for (let i = 0; i < warmup + steps; i++) {
    const t = [performance.now()];
    model.zeroGrad();
    t.push(performance.now());
    const out = model.forward(seqs, { grad: true });
    t.push(performance.now());
    const dlogp = new Float32Array(out.logp.length).fill(-1 / out.logp.length);
    model.backward(out.tape!, { dlogp });
    t.push(performance.now());
    opt.step();
    t.push(performance.now());
    if (i >= warmup) {
      times.push((t[4] - t[0]) / 1000);
      for (let p = 0; p < 4; p++) phases[p].push((t[p + 1] - t[p]) / 1000);
    }
    rss.push(process.memoryUsage().rss);
  }
  const [zero_grad, forward, backward, optimizer] = phases.map(median);
  const med = median(times);
  return { seconds_per_step: med, tokens_per_s: (s.batch * s.seqLen) / med, phases_s: { zero_grad, forward, backward, optimizer }, rss };
}

function benchTorch(s: Shape, precision: Precision, threads: number, warmup: number, steps: number) {
  const spec = { config: s.config, batch: s.batch, seqLen: s.seqLen, threads, warmup, steps, precision };
  try {
    const out = execFileSync(PYTHON, [join(here, "torch_engine.py"), JSON.stringify(spec)], { encoding: "utf8" });
    return JSON.parse(out.trim().split("\n").pop()!) as { seconds_per_step: number; tokens_per_s: number; torch: string };
  } catch (err) {
    // a signal (SIGKILL) usually means the kernel's out-of-memory killer; else Python's last
    // stderr line is the exception
    const { signal, stderr } = err as { signal?: string; stderr?: string };
    const why = signal ? `killed by ${signal}` : (stderr?.trim().split("\n").pop() ?? String(err));
    return { error: `PyTorch side failed: ${why}` };
  }
}

/** RSS after step 10 and after step `steps` of a maso-only run: flat means no leak. */
function leakCheck(s: Shape, steps: number) {
  const { rss } = benchMaso(s, "fp32", 0, steps);
  const mb = (i: number) => rss[i] / 2 ** 20;
  return { steps, rss_mb_at_10: mb(9), rss_mb_at_end: mb(steps - 1), growth_mb: mb(steps - 1) - mb(9) };
}

type TorchRuns = { fp32: ReturnType<typeof benchTorch>; bf16: ReturnType<typeof benchTorch> };

const list = (env: string | undefined, all: string) => (env ?? all).split(",");
const kernels = native();
const info = kernels.info();
const tokS = (r: ReturnType<typeof benchTorch>) => ("tokens_per_s" in r ? r.tokens_per_s : null);
// Full-size shapes: 4 timed steps, as the first steps after the warm-up still fault in fresh pages
const stepsFor = (s: Shape) => Number(process.env.MASO_BENCH_STEPS ?? (s.config.vocabSize > 100000 ? 4 : 8));

/** One JSON row: maso at one precision on one shape, beside the PyTorch runs of that shape. */
function benchRow(s: Shape, precision: Precision, torch: TorchRuns): void {
  const steps = stepsFor(s);
  if (precision === "bf16" && !kernels.bf16().onednn) {
    console.log(JSON.stringify({ shape: s.name, precision, error: "this build has no bf16 GEMM (oneDNN not linked)" }));
    return;
  }
  // measured per row, right before it, so background load affects peak and run alike
  kernels.setPrecision(precision, false);
  const peak = gemmPeakGflops();
  kernels.setPrecision("fp32", false);
  const maso = benchMaso(s, precision, 1, steps);
  const gflops = trainFlops(s) / maso.seconds_per_step / 1e9;
  const rssMb = maso.rss.map((r) => r / 2 ** 20);
  const ratio = (t: ReturnType<typeof benchTorch>) => {
    const other = tokS(t);
    return other ? maso.tokens_per_s / other : null;
  };
  console.log(
    JSON.stringify({
      shape: s.name,
      precision,
      machine: machine(),
      tokens_per_step: s.batch * s.seqLen,
      threads: info.threads,
      gemm: info.gemm,
      maso_tok_s: maso.tokens_per_s,
      torch_fp32_tok_s: tokS(torch.fp32),
      torch_bf16_tok_s: tokS(torch.bf16),
      ratio_fp32: ratio(torch.fp32),
      ratio_bf16: ratio(torch.bf16),
      mfu: gflops / peak,
      maso_gflops: gflops,
      gemm_peak_gflops: peak,
      seconds_per_step: maso.seconds_per_step,
      phases_s: maso.phases_s,
      peak_rss_mb: Math.max(...rssMb),
      rss_drift_mb: rssMb[rssMb.length - 1] - rssMb[1],
      torch: { fp32: torch.fp32, bf16: torch.bf16 },
      ...(s.name === "tiny" && precision === "fp32" && process.env.MASO_BENCH_LEAK !== "0" ? { leak_check: leakCheck(s, 100) } : {}),
    }),
  );
}

// Each (shape, precision) runs in a child process of its own: its peak RSS is that row's alone, and
// a full-size model left behind by the previous row cannot push PyTorch's run out of memory.
const row = process.argv.indexOf("--row");
if (row >= 0) {
  const [name, precision, torch] = process.argv.slice(row + 1);
  benchRow(SHAPES.find((x) => x.name === name)!, precision as Precision, JSON.parse(torch) as TorchRuns);
} else {
  const self = fileURLToPath(import.meta.url);
  const wanted = list(process.env.MASO_BENCH_SHAPES, SHAPES.map((s) => s.name).join(","));
  for (const s of SHAPES.filter((x) => wanted.includes(x.name))) {
    const steps = stepsFor(s);
    const torch: TorchRuns = { fp32: benchTorch(s, "fp32", info.threads, 1, steps), bf16: benchTorch(s, "bf16", info.threads, 1, steps) };
    for (const precision of list(process.env.MASO_BENCH_PRECISIONS, "fp32,bf16")) {
      console.log(childRow(self, ["--row", s.name, precision, JSON.stringify(torch)], { shape: s.name, precision }));
    }
  }
}
