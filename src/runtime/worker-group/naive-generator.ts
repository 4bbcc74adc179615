// The reference sampler: continuous batching over Decoder.forward with a full recompute of every
// sequence at every decode step (no KV cache). Slow but simple and exact; it stays as the oracle the
// KV-cache sampler is tested against; it draws each token with the same sampleToken, so the two
// agree token for token wherever their logits do. It must not keep state between requests beyond
// its counters. It ignores `topLogprobs` (results carry none): alternatives are a serving feature,
// and the oracle's job is the sampled tokens and their log-probs.
import { sampleToken } from "../../engine/generate/sampling.js";
import type { Decoder } from "../../engine/model/decoder.js";
import { createRng, type Rng } from "../../rng.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { MasoError } from "../../errors.js";
import { native } from "../../native/binding.js";
import type { Generator, GeneratorRequest, GeneratorResult } from "./generator.js";
import type { GeneratorStats } from "../protocol/messages.js";

export interface NaiveGeneratorOptions {
  /** Most sequences per decode step (default 64); later requests wait for a free slot. */
  maxBatch?: number;
}

interface Active {
  req: GeneratorRequest;
  rng: Rng;
  tokens: number[];
  logprobs: number[];
  resolve: (r: GeneratorResult) => void;
  reject: (e: unknown) => void;
}

function checkRequest(model: Decoder, r: GeneratorRequest): void {
  const bad = (what: string, hint: string) => new MasoError("GENERATE_INVALID", `generation request: ${what}`, hint);
  if (!Number.isInteger(r.maxNewTokens) || r.maxNewTokens < 1) throw bad(`maxNewTokens is ${r.maxNewTokens}`, "use an integer >= 1");
  if (!(r.temperature >= 0)) throw bad(`temperature is ${r.temperature}`, "use 0 (greedy) or a positive number");
  if (!(r.topP > 0 && r.topP <= 1)) throw bad(`topP is ${r.topP}`, "use a value in (0, 1]");
  if (!Number.isInteger(r.topK) || r.topK < 0) throw bad(`topK is ${r.topK}`, "use an integer >= 0 (0 = off)");
  if (r.promptTokens.length < 1) throw bad("the prompt is empty", "send at least one prompt token");
  if (r.promptTokens.length + 1 > model.config.maxPositionEmbeddings)
    throw new MasoError(
      "CONTEXT_TOO_LONG",
      `prompt of ${r.promptTokens.length} tokens leaves no room to generate (model context ${model.config.maxPositionEmbeddings})`,
      "set the role's maxPromptTokens so the oldest history is dropped",
    );
  if (r.adapter !== null && !model.adapters.has(r.adapter))
    throw bad(`adapter '${r.adapter}' is not on this model`, `use one of: ${[...model.adapters.keys()].join(", ") || "(none)"}`);
}

/**
 * A naive continuous-batching sampler over a Decoder: every decode step runs one packed forward
 * over all active sequences; requests submitted while it runs join at the next step.
 *
 * @example
 * const gen = createNaiveGenerator(model, createByteTokenizer());
 * const out = await gen.submit({ promptTokens: tok.encode("hi"), adapter: null, maxNewTokens: 4, temperature: 1, topP: 1, topK: 0, stopTokenIds: tok.eosTokenIds, stop: [], seed: 7 });
 */
export function createNaiveGenerator(model: Decoder, tokenizer: Tokenizer, options: NaiveGeneratorOptions = {}): Generator {
  const maxBatch = options.maxBatch ?? 64;
  // ids the tokenizer cannot decode are never drawn (the KV-cache Sampler's rule too)
  const allowed = Math.min(model.config.vocabSize, tokenizer.vocabSize);
  const queue: Active[] = [];
  let active: Active[] = [];
  let running = false;
  const stats: GeneratorStats = { requests: 0, steps: 0, sequenceSteps: 0, busyMs: 0 };

  const finish = (a: Active, reason: "stop" | "length", text: string): void => {
    a.resolve({ tokens: a.tokens, logprobs: a.logprobs, text, finishReason: reason });
  };

  /** Appends one token to every active sequence; resolves the ones that finished. */
  const decodeStep = (): void => {
    const t0 = performance.now();
    const cfg = model.config;
    const B = active.length;
    const seqs = active.map((a) => {
      const tokens = [...a.req.promptTokens, ...a.tokens, 0]; // the trailing 0 is a placeholder target
      const scoreMask = new Uint8Array(tokens.length);
      scoreMask[tokens.length - 1] = 1;
      return { tokens, scoreMask, adapter: a.req.adapter };
    });
    const { hidden } = model.forward(seqs, { hidden: true });
    const logits = new Float32Array(B * cfg.vocabSize);
    native().matmulForward(logits, hidden!, model.head(), null, B, cfg.hiddenSize, cfg.vocabSize, false);
    const still: Active[] = [];
    active.forEach((a, b) => {
      const row = logits.subarray(b * cfg.vocabSize, (b + 1) * cfg.vocabSize);
      const { token: id, logprob } = sampleToken(row, allowed, a.req, a.rng);
      a.tokens.push(id);
      a.logprobs.push(logprob);
      const text = tokenizer.decode(a.tokens, { skipSpecialTokens: true });
      const cut = firstStop(text, a.req.stop);
      if (a.req.stopTokenIds.includes(id)) finish(a, "stop", cut < 0 ? text : text.slice(0, cut));
      else if (cut >= 0) finish(a, "stop", text.slice(0, cut));
      else if (a.tokens.length >= a.req.maxNewTokens || a.req.promptTokens.length + a.tokens.length + 1 > cfg.maxPositionEmbeddings)
        finish(a, "length", text);
      else still.push(a);
    });
    active = still;
    stats.steps++;
    stats.sequenceSteps += B;
    stats.busyMs += performance.now() - t0;
  };

  const loop = async (): Promise<void> => {
    running = true;
    try {
      while (active.length > 0 || queue.length > 0) {
        while (active.length < maxBatch && queue.length > 0) active.push(queue.shift()!);
        try {
          decodeStep();
        } catch (err) {
          for (const a of active) a.reject(err);
          active = [];
        }
        await new Promise((r) => setImmediate(r)); // let episodes that just got results submit their next call
      }
    } finally {
      running = false;
    }
  };

  return {
    submit(req) {
      try {
        checkRequest(model, req);
      } catch (err) {
        return Promise.reject(err);
      }
      stats.requests++;
      return new Promise<GeneratorResult>((resolve, reject) => {
        queue.push({ req, rng: createRng(req.seed), tokens: [], logprobs: [], resolve, reject });
        if (!running) {
          running = true;
          setImmediate(() => void loop());
        }
      });
    },
    stats: () => ({ ...stats }),
  };
}

function firstStop(text: string, stops: readonly string[]): number {
  let cut = -1;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && (cut < 0 || i < cut)) cut = i;
  }
  return cut;
}
