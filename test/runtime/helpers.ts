// Shared fixtures for the runtime tests: a tiny engine config, a short supervised warm start (so a
// random model answers with one of a few characters, as after SFT), tiny workflows, and a probe
// that measures an answer's probability with a forward pass. Real models only; no fakes.
import type { ModelConfig } from "../../src/engine/config.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { createAdamW } from "../../src/engine/optim/adamw.js";
import { BYTE_VOCAB_SIZE, createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { encodeChat } from "../../src/engine/tokenizer/encode-chat.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import type { ChatMessage } from "../../src/engine/tokenizer/types.js";
import { native } from "../../src/native/binding.js";
import type { GenerateRequest } from "../../src/runtime/protocol/messages.js";

export const tok = createByteTokenizer();
export const END_ID = tok.tokenToId("<|end|>")!;

export function tinyConfig(over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    architecture: "llama",
    vocabSize: BYTE_VOCAB_SIZE,
    hiddenSize: 32,
    intermediateSize: 64,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 8,
    ropeTheta: 10000,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: true,
    qkvBias: false,
    oBias: false,
    qkNorm: false,
    maxPositionEmbeddings: 128,
    ...over,
  };
}

export const ask = (content: string): ChatMessage[] => [{ role: "user", content }];

/** Generate request `i` of role "r" on one worker group: "prompt <i mod 3>" as episode `e<i>`, seed i. */
export function promptRequest(i: number, o: { adapter: string | null; temperature: number; maxNewTokens: number }): GenerateRequest {
  return {
    call: {
      episodeId: `e${i}`,
      role: "r",
      node: "n",
      visit: 0,
      turn: 0,
      messages: ask(`prompt ${i % 3}`),
      sampling: { temperature: o.temperature, topP: 1, topK: 0 },
      stop: [],
      maxNewTokens: o.maxNewTokens,
    },
    adapter: o.adapter,
    seed: i,
  };
}

/**
 * Supervised warm start: teaches the model to answer each prompt with one of `choices` (uniformly)
 * followed by <|end|>, like a small SFT stage before RL. Use rotations such as "abcd", "cdab": the
 * deterministic letter-after-letter part teaches wide logit margins, so that a LoRA adapter (which
 * cannot touch the tied embeddings) can later make one first letter dominant; with single-letter
 * answers a tiny model's logit range caps that near 1/3.
 */
export function warmStart(model: Decoder, prompts: readonly string[], choices: readonly string[], steps = 60, lr = 1e-2): void {
  const opt = createAdamW([{ name: "base", params: model.params, grads: model.grads! }], { lr, weightDecay: 0 });
  const pairs = prompts.flatMap((p) => choices.map((c) => [p, c] as const));
  for (let step = 0; step < steps; step++) {
    const seqs = pairs.map(([p, c]) => {
      const prompt = encodeChat(tok, ask(p), { addGenerationPrompt: true });
      const tokens = [...prompt, ...tok.encode(c), END_ID];
      const scoreMask = tokens.map((_, i) => (i >= prompt.length ? 1 : 0));
      return { tokens, scoreMask };
    });
    const r = model.forward(seqs, { grad: true });
    model.backward(r.tape!, { dlogp: new Float32Array(r.logp.length).fill(-1 / r.logp.length) });
    opt.step();
    model.zeroGrad();
  }
}

/** A warm-started tiny model (full weights trainable). */
export function warmModel(seed: number, prompts: readonly string[], choices: readonly string[], over: Partial<ModelConfig> = {}): Decoder {
  const m = new Decoder(tinyConfig(over), undefined, { seed });
  warmStart(m, prompts, choices);
  return m;
}

/** p(first response token = `ch` | chat prompt) under `adapter`, by a forward pass. */
export function probFirst(model: Decoder, prompt: string, ch: string, adapter: string | null = null): number {
  const p = encodeChat(tok, ask(prompt), { addGenerationPrompt: true });
  const tokens = [...p, ch.charCodeAt(0)];
  const scoreMask = tokens.map((_, i) => (i === tokens.length - 1 ? 1 : 0));
  return Math.exp(model.forward([{ tokens, scoreMask, adapter }]).logp[0]);
}

/** One role answering a question in a few characters. */
export interface OneState {
  q: string;
  answer: string;
}

export const sayRole = defineRole<OneState, string>({
  name: "say",
  prompt: (s) => ask(s.q),
  parse: textParser(),
  fallback: () => "",
  maxNewTokens: 3,
});

export const oneRoleWorkflow = () =>
  workflow<OneState>({ name: "one-role" })
    .role("say", sayRole, { update: (answer) => ({ answer }) })
    .edge(START, "say")
    .edge("say", END)
    .compile();

/** Two roles: A writes a note, B answers after seeing it. */
export interface TwoState {
  q: string;
  note: string;
  answer: string;
}

export const twoRoleWorkflow = (maxNewTokens = 3) =>
  workflow<TwoState>({ name: "two-role" })
    .role(
      "a",
      defineRole<TwoState, string>({ name: "writer", prompt: (s) => ask(s.q), parse: textParser(), fallback: () => "", maxNewTokens }),
      { update: (note) => ({ note }) },
    )
    .role(
      "b",
      defineRole<TwoState, string>({
        name: "answerer",
        prompt: (s) => ask(`${s.q}:${s.note}`),
        parse: textParser(),
        fallback: () => "",
        maxNewTokens,
      }),
      { update: (answer) => ({ answer }) },
    )
    .edge(START, "a")
    .edge("a", "b")
    .edge("b", END)
    .compile();

/** n episodes per prompt, grouped by prompt (taskId) for group baselines. */
export function items<S>(prompts: readonly string[], n: number, state: (q: string) => S, tag = "") {
  return prompts.flatMap((q, i) =>
    Array.from({ length: n }, (_, k) => ({ episode: { id: `${tag}p${i}-${k}`, state: state(q), taskId: `p${i}` }, task: q })),
  );
}

/** The full next-token distribution after the chat prompt, under `adapter`. */
export function firstDist(model: Decoder, prompt: string, adapter: string | null): Float64Array {
  const p = encodeChat(tok, ask(prompt), { addGenerationPrompt: true });
  const tokens = [...p, 0];
  const scoreMask = tokens.map((_, i) => (i === tokens.length - 1 ? 1 : 0));
  const { hidden } = model.forward([{ tokens, scoreMask, adapter }], { hidden: true });
  const V = model.config.vocabSize;
  const logits = new Float32Array(V);
  native().matmulForward(logits, hidden!, model.head(), null, 1, model.config.hiddenSize, V, false);
  const max = Math.max(...logits);
  const e = Float64Array.from(logits, (x) => Math.exp(x - max));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

/** Exact KL(p ‖ q) between two next-token distributions. */
export function klExact(p: Float64Array, q: Float64Array): number {
  let kl = 0;
  for (let i = 0; i < p.length; i++) if (p[i] > 0) kl += p[i] * Math.log(p[i] / q[i]);
  return kl;
}
