// The decoder-only transformer (Llama / Qwen2 / Qwen3) composed from native kernel pairs: embedding,
// the layers of block.ts, final norm and LM head.
// forward() returns per scored token: log-prob of the given next token, entropy, and optionally
// a critic value and the final hidden state; backward() takes gradients w.r.t. exactly those
// outputs. RL losses live in TypeScript on top; the engine never needs to know PPO.
//
// Shapes: N packed tokens, B sequences, M scored tokens, C hidden, F mlp, NH/KVH heads, HS head
// size, V vocab, R LoRA rank. Activations in a Tape are overwritten per call (=); parameter
// gradients accumulate (+=) until the optimiser zeroes them.
import { MasoError } from "../../errors.js";
import { type Precision, native } from "../../native/binding.js";
import type { LoraConfig, ModelConfig } from "../config.js";
import type { ParamTable } from "../params.js";
import { type PackedBatch, type SequenceInput, packBatch } from "./batch.js";
import { type Attend, type LayerActs, blockBackward, blockForward, releaseActs } from "./block.js";
import { give, take, takeUncleared } from "./scratch.js";
import { createRng, type SeededRng } from "../../rng.js";
import { type Adapter, createAdapter } from "./lora.js";
import { type ValueHead, createValueHead, valueHeadBackward, valueHeadForward } from "./value-head.js";
import { type LayerGrads, type LayerWeights, initParams, layerViews, validateConfig } from "./weights.js";

export type { LayerWeights };

/** What backward needs from a forward pass with grad enabled. */
export interface Tape {
  batch: PackedBatch;
  layers: LayerActs[];
  xL: Float32Array; // (N,C) final residual
  lnf: Float32Array; // (N,C)
  rstdf: Float32Array; // (N)
  hs: Float32Array; // (M,C) final hidden rows that were scored
  lse: Float32Array; // (M)
  entropy: Float32Array; // (M)
  logits: Float32Array | null; // (M,V) kept when small enough
  invTemp: number;
  valueZ: Float32Array | null;
  consumed: boolean;
}

export interface ForwardOptions {
  /** Divide logits by this before softmax (match the sampling temperature). Default 1. */
  temperature?: number;
  /** Keep activations for backward. Default false. */
  grad?: boolean;
  /** Also return the critic value of each scored token's state (needs a value head). */
  values?: boolean;
  /** Also return the final hidden state (M,C) of each scored token's state. */
  hidden?: boolean;
  /**
   * With grad: keep the (M,V) logits for backward when they fit in this many floats (default
   * 256M = 1 GiB); larger ones are recomputed chunk by chunk, trading ~25 % more LM-head compute
   * for memory.
   */
  keepLogitsFloats?: number;
}

export interface ForwardResult {
  /** (M) log p(token | prefix) for each scored token, in batch order */
  logp: Float32Array;
  /** (M) entropy of the next-token distribution at the same positions */
  entropy: Float32Array;
  /** (M) critic value of the state before each scored token */
  values?: Float32Array;
  /** (M,C) final normalised hidden state at those positions */
  hidden?: Float32Array;
  /** (B+1) offsets of each sequence's scored tokens */
  scoredStarts: Int32Array;
  /** (M) position of each scored token within its sequence */
  scoredPositions: Int32Array;
  /** present when grad was requested */
  tape?: Tape;
}

export interface BackwardGrads {
  dlogp?: Float32Array;
  dentropy?: Float32Array;
  dvalues?: Float32Array;
}

const KEEP_LOGITS_FLOATS = 256 * 1024 * 1024;

export interface DecoderOptions {
  /** Train the base weights (full fine-tuning). False freezes them (LoRA / value head only). */
  trainBase?: boolean;
  seed?: number;
}

export class Decoder {
  readonly config: ModelConfig;
  readonly params: ParamTable;
  /** null when the base is frozen */
  grads: ParamTable | null;
  readonly adapters = new Map<string, Adapter>();
  valueHead: ValueHead | null = null;
  readonly rng: SeededRng;
  /** Per-layer views into `params`; the sampler reads the same memory, so updates are seen at once. */
  readonly lw: readonly LayerWeights[];
  /**
   * GEMM operand precision of this model. The native switch belongs to the calling thread, shared
   * by every model on it, so forward(), backward() and the sampler's step set it on entry: models
   * of one process may differ.
   */
  precision: Precision = "fp32";
  private lg: LayerGrads[] | null;

  constructor(config: ModelConfig, params?: ParamTable, opts: DecoderOptions = {}) {
    validateConfig(config);
    this.config = config;
    this.rng = createRng(opts.seed ?? 0);
    this.params = params ?? initParams(config, this.rng);
    this.lw = layerViews(config, this.params);
    this.grads = null;
    this.lg = null;
    this.setTrainBase(opts.trainBase ?? true);
  }

  /** Enables or disables gradients (and their memory) for the base weights. */
  setTrainBase(on: boolean): void {
    this.grads = on ? (this.grads ?? this.params.zerosLike()) : null;
    this.lg = this.grads ? layerViews(this.config, this.grads) : null;
  }

  addAdapter(name: string, lora: LoraConfig, params?: ParamTable): Adapter {
    if (this.adapters.has(name)) throw new MasoError("ADAPTER_EXISTS", `adapter '${name}' already exists on this model`);
    const a = createAdapter(this.config, name, lora, this.rng, params);
    this.adapters.set(name, a);
    return a;
  }

  addValueHead(hidden: number, opts: { detach?: boolean; params?: ParamTable } = {}): ValueHead {
    const vh = createValueHead(this.config.hiddenSize, hidden, this.rng, opts.detach ?? false);
    if (opts.params) vh.params.data.set(opts.params.data);
    this.valueHead = vh;
    return vh;
  }

  /** LM head matrix (V,C): the embedding when tied. */
  head(): Float32Array {
    return this.params.get(this.config.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight");
  }

  private headGrad(): Float32Array | null {
    if (!this.grads) return null;
    return this.grads.get(this.config.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight");
  }

  /** Runs a packed batch. See SequenceInput for the loss mask and per-sequence adapters. */
  forward(seqs: readonly SequenceInput[], opts: ForwardOptions = {}): ForwardResult {
    const kernels = native();
    kernels.setPrecision(this.precision, false);
    const cfg = this.config;
    const batch = packBatch(cfg, seqs, (n) => this.adapters.has(n));
    const temperature = opts.temperature ?? 1;
    if (!(temperature > 0) || !Number.isFinite(temperature))
      throw new MasoError("BAD_TEMPERATURE", `temperature must be > 0, got ${temperature}`);
    if (opts.values && !this.valueHead)
      throw new MasoError("NO_VALUE_HEAD", "values requested but the model has no value head", "call addValueHead() first");
    const { N, M } = batch;
    const C = cfg.hiddenSize;
    const V = cfg.vocabSize;

    let x: Float32Array = takeUncleared(N * C);
    kernels.embeddingForward(x, batch.ids, this.params.get("model.embed_tokens.weight"), N, C, V);
    const layers: LayerActs[] = [];
    // training attends within each packed sequence, causally, over all its rows at once
    const attend: Attend = (_l, att, lse, qr, kr, v) =>
      kernels.attentionForward(att, lse, qr, kr, v, batch.starts, batch.B, cfg.numHeads, cfg.numKvHeads, cfg.headDim);
    for (let l = 0; l < cfg.numLayers; l++) {
      const { out, acts } = blockForward(this, l, x, batch, attend, opts.grad === true);
      if (acts) layers.push(acts);
      else give(x);
      x = out;
    }
    const lnf = takeUncleared(N * C);
    const rstdf = new Float32Array(N);
    kernels.rmsnormForward(lnf, rstdf, x, this.params.get("model.norm.weight"), N, C, cfg.rmsNormEps);
    const hs = new Float32Array(M * C);
    kernels.gatherRows(hs, lnf, batch.rows, M, C, N);
    if (!opts.grad) give(x, lnf);
    const logp = new Float32Array(M);
    const entropy = new Float32Array(M);
    const lse = new Float32Array(M);
    const logits = opts.grad && M * V <= (opts.keepLogitsFloats ?? KEEP_LOGITS_FLOATS) ? takeUncleared(M * V) : null;
    kernels.logitsForward(logp, entropy, lse, logits, hs, this.head(), batch.targets, M, C, V, 1 / temperature);

    const result: ForwardResult = { logp, entropy, scoredStarts: batch.scoredStarts, scoredPositions: batch.scoredPositions };
    let valueZ: Float32Array | null = null;
    if (opts.values && this.valueHead) {
      const values = new Float32Array(M);
      valueZ = valueHeadForward(this.valueHead, values, hs, M, C);
      result.values = values;
    }
    if (opts.hidden) result.hidden = hs;
    if (opts.grad) {
      result.tape = { batch, layers, xL: x, lnf, rstdf, hs, lse, entropy, logits, invTemp: 1 / temperature, valueZ, consumed: false };
    }
    return result;
  }

  /** Accumulates parameter gradients from gradients w.r.t. the forward's per-token outputs. */
  backward(tape: Tape, grads: BackwardGrads): void {
    if (tape.consumed)
      throw new MasoError("TAPE_REUSED", "backward() was already called on this forward's tape", "run forward({grad: true}) again");
    tape.consumed = true;
    const kernels = native();
    kernels.setPrecision(this.precision, false);
    const cfg = this.config;
    const { batch } = tape;
    const { N, M } = batch;
    const C = cfg.hiddenSize;
    const V = cfg.vocabSize;
    for (const [name, g] of Object.entries(grads)) {
      if (g && g.length !== M) throw new MasoError("GRAD_SHAPE", `${name} has ${g.length} entries, the forward scored ${M} tokens`);
    }
    const dhs = new Float32Array(M * C);
    if (grads.dlogp || grads.dentropy) {
      kernels.logitsBackward(
        dhs,
        this.headGrad(),
        grads.dlogp ?? null,
        grads.dentropy ?? null,
        tape.logits,
        tape.lse,
        tape.entropy,
        tape.hs,
        this.head(),
        batch.targets,
        M,
        C,
        V,
        tape.invTemp,
      );
    }
    if (grads.dvalues) {
      if (!this.valueHead || !tape.valueZ)
        throw new MasoError("NO_VALUES", "dvalues given but the forward computed no values", "forward with {values: true}");
      valueHeadBackward(this.valueHead, dhs, grads.dvalues, tape.hs, tape.valueZ, M, C);
    }
    give(tape.logits);
    if (!this.grads && this.adapters.size === 0) return; // nothing upstream of the head trains
    const dlnf = take(N * C);
    kernels.scatterAddRows(dlnf, dhs, batch.rows, M, C, N);
    const dx = take(N * C);
    kernels.rmsnormBackward(
      dx,
      this.grads ? this.grads.get("model.norm.weight") : null,
      dlnf,
      tape.xL,
      this.params.get("model.norm.weight"),
      tape.rstdf,
      N,
      C,
    );
    give(dlnf, tape.xL, tape.lnf);
    for (let l = cfg.numLayers - 1; l >= 0; l--) {
      blockBackward(this, this.lg?.[l] ?? null, l, dx, tape.layers[l], batch);
      releaseActs(tape.layers[l]);
    }
    if (this.grads) kernels.embeddingBackward(this.grads.get("model.embed_tokens.weight"), dx, batch.ids, N, C, V);
    give(dx);
  }

  /** Call after writing weights in place (a checkpoint load, a weight sync): bf16 GEMMs then convert them again. */
  weightsWritten(): void {
    native().weightsChanged();
  }

  /** Zeroes base, adapter and value-head gradients. */
  zeroGrad(): void {
    const zero = (g: Float32Array) => native().zero(g, g.length); // over the kernel threads: up to GBs
    if (this.grads) zero(this.grads.data);
    for (const a of this.adapters.values()) zero(a.grads.data);
    if (this.valueHead) zero(this.valueHead.grads.data);
  }
}
