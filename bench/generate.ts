// `npm run bench:generate`: generation throughput of maso's Sampler (paged KV cache, continuous
// batching; fp32 and bf16 GEMMs) and of llama.cpp through node-llama-cpp on the same weights,
// exported by maso to GGUF F16 and BF16 (llama.cpp's 16-bit formats), at the same thread count:
// prefill and decode tokens/s at batch 1, 16, 64, one row per (batch, maso precision, llama.cpp
// format) with maso/llama.cpp ratios, plus maso's prefix-sharing speed-up for 8 samples of one
// 256-token prompt. Prints one JSON object. Env: MASO_THREADS, MASO_BENCH_SHAPES (tiny,small;
// also qwen0.5b-layers, qwen2.5-0.5b, qwen3-0.6b), MASO_BENCH_BATCHES=1,16,64,
// MASO_BENCH_PRECISIONS=fp32,bf16, MASO_BENCH_FORMATS=f16,bf16,
// MASO_BENCH_PROMPT (64), MASO_BENCH_NEW (16), MASO_BENCH_RUNS (3: each rate is the median of this
// many timed runs after one warm-up, on both sides), MASO_NODE_LLAMA_CPP=<path to node-llama-cpp's dist/index.js>
// when the package is not installed in this project. Measures only; changes nothing on disk but a temp dir.
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ModelConfig } from "../src/engine/config.js";
import { writeGguf } from "../src/engine/io/gguf.js";
import { Sampler } from "../src/engine/generate/sampler.js";
import { Decoder } from "../src/engine/model/decoder.js";
import { BENCH_SHAPES } from "./shapes.js";
import { createByteTokenizer } from "../src/engine/tokenizer/byte-tokenizer.js";
import { defaultThreads, native } from "../src/native/binding.js";
import { machine } from "./machine.js";
import { median } from "./median.js";

const SHAPES: Record<string, ModelConfig> = BENCH_SHAPES;
type Precision = "fp32" | "bf16";
type Format = "f16" | "bf16";

const list = (env: string | undefined, def: string) => (env ?? def).split(",").filter(Boolean);
const threads = defaultThreads();
const shapes = list(process.env.MASO_BENCH_SHAPES, "tiny,small");
const batches = list(process.env.MASO_BENCH_BATCHES, "1,16,64").map(Number);
const precisions = list(process.env.MASO_BENCH_PRECISIONS, "fp32,bf16") as Precision[];
const formats = list(process.env.MASO_BENCH_FORMATS, "f16,bf16") as Format[];
const PROMPT = Number(process.env.MASO_BENCH_PROMPT ?? 64);
const NEW = Number(process.env.MASO_BENCH_NEW ?? 16);
const RUNS = Math.max(1, Number(process.env.MASO_BENCH_RUNS ?? 3));
const round = (x: number) => Math.round(x * 10) / 10;
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/**
 * A STREAM-like copy on one thread: the best of 5 copies of a 256 MB array, read and write bytes
 * counted (what a memory-bound decode step can hope to stream).
 */
function copyGbS(): number {
  const src = new Float32Array(64 << 20).fill(1);
  const dst = new Float32Array(src.length);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    dst.set(src);
    best = Math.min(best, performance.now() - t);
  }
  return round((2 * src.byteLength) / best / 1e6);
}

/** Weight bytes a decode step streams (every weight once, at the precision's width) times steps/s. */
const decodeGbS = (params: number, precision: Precision, B: number, r: Rates) =>
  round((params * (precision === "bf16" ? 2 : 4) * (r.decodeTokS / B)) / 1e9);

/** B distinct prompts of PROMPT byte-range ids (distinct, so nothing is shared). */
const prompts = (B: number) => Array.from({ length: B }, (_, b) => Array.from({ length: PROMPT }, (_, i) => (b * 31 + i * 7) % 250));

interface Rates {
  prefillTokS: number;
  decodeTokS: number;
}

/** Each rate's median over the timed runs: on a shared machine one run can land on a busy moment. */
function medianRates(runs: readonly Rates[]): Rates {
  return { prefillTokS: round(median(runs.map((r) => r.prefillTokS))), decodeTokS: round(median(runs.map((r) => r.decodeTokS))) };
}

async function masoRates(model: Decoder, B: number): Promise<Rates> {
  // no prefix sharing: the measured run would find the warm-up's prompts cached and prefill only
  // their last block, where llama.cpp (its history cleared) prefills every token
  const sampler = new Sampler(model, { maxBatch: B, maxPrefillTokens: B * PROMPT, prefixSharing: false });
  const run = () => sampler.generate(prompts(B).map((p) => ({ promptTokens: p, maxNewTokens: NEW + 1, temperature: 0, ignoreEos: true })));
  await run(); // warm-up: pool growth, page faults
  const runs: Rates[] = [];
  for (let i = 0; i < RUNS; i++) {
    const before = sampler.stats();
    await run();
    const s = sampler.stats();
    runs.push({
      prefillTokS: ((s.prefillTokens - before.prefillTokens) / (s.prefillMs - before.prefillMs)) * 1000,
      decodeTokS: ((s.decodeTokens - before.decodeTokens) / (s.decodeMs - before.decodeMs)) * 1000,
    });
  }
  return medianRates(runs);
}

// node-llama-cpp's API, the little this bench uses
interface LlamaSequence {
  evaluateWithoutGeneratingNewTokens(tokens: number[]): Promise<void>;
  evaluate(tokens: number[], opts: { temperature: number }): AsyncGenerator<number>;
  clearHistory(): Promise<void>;
}
interface LlamaContext {
  getSequence(): LlamaSequence;
  dispose(): Promise<void>;
}
interface LlamaModel {
  createContext(opts: {
    sequences: number;
    contextSize: number;
    batchSize: number;
    threads: { ideal: number; min: number };
  }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
interface Llama {
  loadModel(opts: { modelPath: string }): Promise<LlamaModel>;
}
interface NodeLlamaCpp {
  getLlama(opts: object): Promise<Llama>;
  LlamaLogLevel: { error: unknown };
}

async function loadNodeLlamaCpp(): Promise<{ mod: NodeLlamaCpp | null; note: string }> {
  const spec = process.env.MASO_NODE_LLAMA_CPP;
  try {
    const mod = (await import(spec ? pathToFileURL(spec).href : "node-llama-cpp")) as NodeLlamaCpp;
    return { mod, note: spec ? `node-llama-cpp from ${spec}` : "node-llama-cpp" };
  } catch (err) {
    return {
      mod: null,
      note: `node-llama-cpp not installed (${(err as Error).message.split("\n")[0]}); npm install --no-save node-llama-cpp@3.21.1 to compare with llama.cpp`,
    };
  }
}

async function llamaRates(llama: Llama, path: string, B: number): Promise<Rates> {
  const model = await llama.loadModel({ modelPath: path });
  try {
    const ctx = await model.createContext({
      sequences: B,
      contextSize: B * (PROMPT + NEW + 8),
      batchSize: Math.min(B * PROMPT, 4096),
      threads: { ideal: threads, min: threads },
    });
    const seqs = Array.from({ length: B }, () => ctx.getSequence());
    const once = async (): Promise<{ prefillMs: number; decodeMs: number }> => {
      await Promise.all(seqs.map((s) => s.clearHistory()));
      const p = prompts(B);
      let t = performance.now();
      await Promise.all(seqs.map((s, b) => s.evaluateWithoutGeneratingNewTokens(p[b])));
      const prefillMs = performance.now() - t;
      t = performance.now();
      await Promise.all(
        seqs.map(async (s) => {
          let n = 0;
          for await (const _ of s.evaluate([1], { temperature: 0 })) if (++n >= NEW) break;
        }),
      );
      return { prefillMs, decodeMs: performance.now() - t };
    };
    await once(); // warm-up
    const runs: Rates[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await once();
      runs.push({ prefillTokS: ((B * PROMPT) / r.prefillMs) * 1000, decodeTokS: ((B * NEW) / r.decodeMs) * 1000 });
    }
    await ctx.dispose();
    return medianRates(runs);
  } finally {
    await model.dispose();
  }
}

async function prefixSharing(model: Decoder): Promise<object> {
  const prompt = Array.from({ length: 256 }, (_, i) => (i * 13) % 250);
  const reqs = Array.from({ length: 8 }, (_, i) => ({ promptTokens: prompt, maxNewTokens: NEW, temperature: 1, seed: i, ignoreEos: true }));
  const time = async (prefixSharing: boolean) => {
    const sampler = new Sampler(model, { prefixSharing, maxPrefillTokens: 8 * 256 });
    await sampler.generate(reqs); // warm-up
    const before = sampler.stats();
    const t = performance.now();
    await sampler.generate(reqs);
    return { ms: performance.now() - t, prefillTokens: sampler.stats().prefillTokens - before.prefillTokens };
  };
  const unshared = await time(false);
  const shared = await time(true);
  return {
    samples: 8,
    promptTokens: 256,
    newTokens: NEW,
    sharedMs: round(shared.ms),
    unsharedMs: round(unshared.ms),
    speedup: ratio(unshared.ms, shared.ms),
    prefillTokens: { shared: shared.prefillTokens, unshared: unshared.prefillTokens },
  };
}

async function main(): Promise<void> {
  const info = native().info();
  const { mod, note } = await loadNodeLlamaCpp();
  const llama = mod ? await mod.getLlama({ gpu: false, build: "never", maxThreads: threads, logLevel: mod.LlamaLogLevel.error }) : null;
  const dir = await mkdtemp(join(tmpdir(), "maso-bench-gen-"));
  const out: Record<string, unknown> = {
    machine: machine(),
    threads,
    gemm: info.gemm,
    // llama.cpp's threads spin while waiting: on a machine busier than its core count they collapse
    loadAverageBefore: loadavg()[0],
    llamaCpp: note,
    promptTokens: PROMPT,
    newTokens: NEW,
    timedRuns: RUNS,
    copy_gb_s: copyGbS(),
    notes:
      "tokens/s over all sequences; decode = one new token per sequence per step; both prefill every prompt token (maso without prefix sharing); llama.cpp runs maso's F16 or BF16 export with its default F16 KV cache; decode_gb_s = weight bytes per decode step (each weight once, 2 bytes in bf16, 4 in fp32) x steps/s, against copy_gb_s (one thread, read + write bytes)",
    shapes: [] as object[],
  };
  try {
    for (const name of shapes) {
      const config = SHAPES[name];
      if (!config) throw new Error(`unknown shape ${name}; use ${Object.keys(SHAPES).join(",")}`);
      const model = new Decoder(config, undefined, { seed: 1, trainBase: false });
      const paths = new Map<Format, string>();
      for (const f of formats) {
        const path = join(dir, `${name}-${f}.gguf`);
        await writeGguf(path, model, { tokenizer: createByteTokenizer(), dtype: f });
        paths.set(f, path);
      }
      const rows = [];
      for (const B of batches) {
        const cpp = new Map<Format, Rates | { error: string }>();
        for (const [f, path] of paths)
          if (llama) cpp.set(f, await llamaRates(llama, path, B).catch((e: Error) => ({ error: e.message.split("\n")[0] })));
        for (const precision of precisions) {
          if (precision === "bf16" && !native().bf16().onednn) continue;
          model.precision = precision;
          const rates = await masoRates(model, B);
          const maso = { ...rates, decode_gb_s: decodeGbS(model.params.data.length, precision, B, rates) };
          for (const f of formats) {
            const theirs = cpp.get(f) ?? null;
            rows.push({
              batch: B,
              precision,
              maso,
              llamaCpp: theirs ? { format: f.toUpperCase(), ...theirs } : null,
              ratio:
                theirs && "prefillTokS" in theirs
                  ? { prefill: ratio(maso.prefillTokS, theirs.prefillTokS), decode: ratio(maso.decodeTokS, theirs.decodeTokS) }
                  : null,
            });
          }
        }
      }
      model.precision = "fp32";
      const entry: Record<string, unknown> = { shape: name, params: model.params.data.length, rows };
      if (name === "small" || shapes.length === 1) entry.prefixSharing = await prefixSharing(model);
      (out.shapes as object[]).push(entry);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  out.loadAverageAfter = loadavg()[0];
  console.log(JSON.stringify(out, null, 2));
}

await main();
