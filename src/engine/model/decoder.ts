// The decoder-only transformer (Llama / Qwen2 / Qwen3) composed from native kernel pairs.
// forward() returns per scored token: log-prob of the given next token, entropy, and optionally
// a critic value and the final hidden state; backward() takes gradients w.r.t. exactly those
// outputs. RL losses live in TypeScript on top; the engine never needs to know PPO.
//
// Shapes: N packed tokens, B sequences, M scored tokens, C hidden, F mlp, NH/KVH heads, HS head
// size, V vocab, R LoRA rank. Activations in a Tape are overwritten per call (=); parameter
// gradients accumulate (+=) until the optimiser zeroes them.
import { MasoError } from "../../errors.js";
import { native } from "../../native/binding.js";
import type { LoraConfig, LoraTarget, ModelConfig } from "../config.js";
import { type ParamTable, projectionShape } from "../params.js";
import { type PackedBatch, type SequenceInput, packBatch } from "./batch.js";
import { createRng, type SeededRng } from "../../rng.js";
import { type Adapter, createAdapter } from "./lora.js";
import { type ValueHead, createValueHead, valueHeadBackward, valueHeadForward } from "./value-head.js";
import { type LayerGrads, type LayerWeights, initParams, layerDims, layerViews, validateConfig } from "./weights.js";

type Proj = LoraTarget;
export type { LayerWeights };

/** Saved activations of one layer (all overwritten each forward). */
interface LayerActs {
  x: Float32Array; // (N,C) layer input (residual stream)
  ln1: Float32Array; // (N,C)
  rstd1: Float32Array; // (N)
  q: Float32Array; // (N,NH*HS) before q-norm
  k: Float32Array; // (N,KVH*HS)
  v: Float32Array; // (N,KVH*HS)
  rstdq?: Float32Array; // (N*NH)
  rstdk?: Float32Array; // (N*KVH)
  qn: Float32Array; // (N,NH*HS) after q-norm (= q when no norm)
  kn: Float32Array;
  qr: Float32Array; // (N,NH*HS) after RoPE
  kr: Float32Array; // (N,KVH*HS)
  att: Float32Array; // (N,NH*HS)
  lse: Float32Array; // (N,NH)
  x2: Float32Array; // (N,C) after attention residual
  ln2: Float32Array;
  rstd2: Float32Array;
  gate: Float32Array; // (N,F)
  up: Float32Array; // (N,F)
  h: Float32Array; // (N,F) silu(gate)*up
  lora: Map<string, Float32Array>; // `${proj}:${segment}` -> u (rows,R) = scale * x A^T
}

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
    const k = native();
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

    let x: Float32Array = new Float32Array(N * C);
    k.embeddingForward(x, batch.ids, this.params.get("model.embed_tokens.weight"), N, C, V);
    const layers: LayerActs[] = [];
    for (let l = 0; l < cfg.numLayers; l++) {
      const acts = this.layerForward(l, x, batch);
      x = acts.out;
      if (opts.grad) layers.push(acts.saved);
    }
    const lnf = new Float32Array(N * C);
    const rstdf = new Float32Array(N);
    k.rmsnormForward(lnf, rstdf, x, this.params.get("model.norm.weight"), N, C, cfg.rmsNormEps);
    const hs = new Float32Array(M * C);
    k.gatherRows(hs, lnf, batch.rows, M, C, N);
    const logp = new Float32Array(M);
    const entropy = new Float32Array(M);
    const lse = new Float32Array(M);
    const logits = opts.grad && M * V <= (opts.keepLogitsFloats ?? KEEP_LOGITS_FLOATS) ? new Float32Array(M * V) : null;
    k.logitsForward(logp, entropy, lse, logits, hs, this.head(), batch.targets, M, C, V, 1 / temperature);

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
    const k = native();
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
      k.logitsBackward(
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
    if (!this.grads && this.adapters.size === 0) return; // nothing upstream of the head trains
    const dlnf = new Float32Array(N * C);
    k.scatterAddRows(dlnf, dhs, batch.rows, M, C, N);
    const dx = new Float32Array(N * C);
    k.rmsnormBackward(
      dx,
      this.grads ? this.grads.get("model.norm.weight") : null,
      dlnf,
      tape.xL,
      this.params.get("model.norm.weight"),
      tape.rstdf,
      N,
      C,
    );
    for (let l = cfg.numLayers - 1; l >= 0; l--) this.layerBackward(l, dx, tape.layers[l], batch);
    if (this.grads) k.embeddingBackward(this.grads.get("model.embed_tokens.weight"), dx, batch.ids, N, C, V);
  }

  /** Zeroes base, adapter and value-head gradients. */
  zeroGrad(): void {
    this.grads?.data.fill(0);
    for (const a of this.adapters.values()) a.grads.data.fill(0);
    this.valueHead?.grads.data.fill(0);
  }

  // ---- layers -------------------------------------------------------------------------------

  private proj(
    l: number,
    p: Proj,
    out: Float32Array,
    inp: Float32Array,
    batch: PackedBatch,
    accumulate: boolean,
    saved: Map<string, Float32Array> | null,
  ): void {
    const k = native();
    const { inDim, outDim } = projectionShape(this.config, p);
    const w = this.lw[l];
    k.matmulForward(out, inp, w.w[p], w.b[p] ?? null, batch.N, inDim, outDim, accumulate);
    batch.segments.forEach((seg, si) => {
      const lw = seg.adapter ? this.adapters.get(seg.adapter)?.layers[l][p] : undefined;
      if (!lw || !seg.adapter) return;
      const a = this.adapters.get(seg.adapter)!;
      const R = a.lora.rank;
      const rows = seg.r1 - seg.r0;
      const u = new Float32Array(rows * R);
      k.matmulForward(u, inp.subarray(seg.r0 * inDim, seg.r1 * inDim), lw.A, null, rows, inDim, R, false);
      k.scale(u, a.scale, rows * R);
      k.matmulForward(out.subarray(seg.r0 * outDim, seg.r1 * outDim), u, lw.B, null, rows, R, outDim, true);
      saved?.set(`${p}:${si}`, u);
    });
  }

  private projBackward(
    l: number,
    p: Proj,
    dinp: Float32Array,
    dout: Float32Array,
    inp: Float32Array,
    batch: PackedBatch,
    saved: Map<string, Float32Array>,
  ): void {
    const k = native();
    const { inDim, outDim } = projectionShape(this.config, p);
    const g = this.lg?.[l];
    k.matmulBackward(dinp, g ? g.w[p] : null, g?.b[p] ?? null, dout, inp, this.lw[l].w[p], batch.N, inDim, outDim);
    batch.segments.forEach((seg, si) => {
      const u = saved.get(`${p}:${si}`);
      if (!u || !seg.adapter) return;
      const a = this.adapters.get(seg.adapter)!;
      const lw = a.layers[l][p]!;
      const R = a.lora.rank;
      const rows = seg.r1 - seg.r0;
      const doutSeg = dout.subarray(seg.r0 * outDim, seg.r1 * outDim);
      const du = new Float32Array(rows * R);
      k.matmulBackward(du, lw.dB, null, doutSeg, u, lw.B, rows, R, outDim);
      k.scale(du, a.scale, rows * R);
      k.matmulBackward(
        dinp.subarray(seg.r0 * inDim, seg.r1 * inDim),
        lw.dA,
        null,
        du,
        inp.subarray(seg.r0 * inDim, seg.r1 * inDim),
        lw.A,
        rows,
        inDim,
        R,
      );
    });
  }

  private layerForward(l: number, x: Float32Array, batch: PackedBatch): { out: Float32Array; saved: LayerActs } {
    const k = native();
    const cfg = this.config;
    const { N, B } = batch;
    const { C, F, NH, KVH, HS, eps } = layerDims(cfg);
    const w = this.lw[l];
    const lora = new Map<string, Float32Array>();

    const ln1 = new Float32Array(N * C);
    const rstd1 = new Float32Array(N);
    k.rmsnormForward(ln1, rstd1, x, w.ln1, N, C, eps);
    const q = new Float32Array(N * NH * HS);
    const kk = new Float32Array(N * KVH * HS);
    const v = new Float32Array(N * KVH * HS);
    this.proj(l, "q_proj", q, ln1, batch, false, lora);
    this.proj(l, "k_proj", kk, ln1, batch, false, lora);
    this.proj(l, "v_proj", v, ln1, batch, false, lora);
    let qn = q;
    let kn = kk;
    let rstdq: Float32Array | undefined;
    let rstdk: Float32Array | undefined;
    if (w.qNorm && w.kNorm) {
      qn = new Float32Array(q.length);
      kn = new Float32Array(kk.length);
      rstdq = new Float32Array(N * NH);
      rstdk = new Float32Array(N * KVH);
      k.rmsnormForward(qn, rstdq, q, w.qNorm, N * NH, HS, eps);
      k.rmsnormForward(kn, rstdk, kk, w.kNorm, N * KVH, HS, eps);
    }
    const qr = new Float32Array(q.length);
    const kr = new Float32Array(kk.length);
    k.ropeForward(qr, qn, batch.pos, N, NH, HS, cfg.ropeTheta);
    k.ropeForward(kr, kn, batch.pos, N, KVH, HS, cfg.ropeTheta);
    const att = new Float32Array(N * NH * HS);
    const lse = new Float32Array(N * NH);
    k.attentionForward(att, lse, qr, kr, v, batch.starts, B, NH, KVH, HS);
    const x2 = x.slice();
    this.proj(l, "o_proj", x2, att, batch, true, lora);

    const ln2 = new Float32Array(N * C);
    const rstd2 = new Float32Array(N);
    k.rmsnormForward(ln2, rstd2, x2, w.ln2, N, C, eps);
    const gate = new Float32Array(N * F);
    const up = new Float32Array(N * F);
    this.proj(l, "gate_proj", gate, ln2, batch, false, lora);
    this.proj(l, "up_proj", up, ln2, batch, false, lora);
    const h = new Float32Array(N * F);
    k.swigluForward(h, gate, up, N, F);
    const out = x2.slice();
    this.proj(l, "down_proj", out, h, batch, true, lora);
    return { out, saved: { x, ln1, rstd1, q, k: kk, v, rstdq, rstdk, qn, kn, qr, kr, att, lse, x2, ln2, rstd2, gate, up, h, lora } };
  }

  /** dx (N,C): gradient w.r.t. the layer output on entry, w.r.t. its input on return. */
  private layerBackward(l: number, dx: Float32Array, a: LayerActs, batch: PackedBatch): void {
    const k = native();
    const cfg = this.config;
    const { N, B } = batch;
    const { C, F, NH, KVH, HS } = layerDims(cfg);
    const w = this.lw[l];
    const g = this.lg?.[l] ?? null;

    // MLP branch (reverse of: ln2 -> gate/up -> swiglu -> down -> residual add)
    const dh = new Float32Array(N * F);
    this.projBackward(l, "down_proj", dh, dx, a.h, batch, a.lora);
    const dgate = new Float32Array(N * F);
    const dup = new Float32Array(N * F);
    k.swigluBackward(dgate, dup, dh, a.gate, a.up, N, F);
    const dln2 = new Float32Array(N * C);
    this.projBackward(l, "gate_proj", dln2, dgate, a.ln2, batch, a.lora);
    this.projBackward(l, "up_proj", dln2, dup, a.ln2, batch, a.lora);
    k.rmsnormBackward(dx, g ? g.ln2 : null, dln2, a.x2, w.ln2, a.rstd2, N, C);

    // attention branch (reverse of: ln1 -> q/k/v -> qk-norm -> rope -> attention -> o -> residual add)
    const datt = new Float32Array(N * NH * HS);
    this.projBackward(l, "o_proj", datt, dx, a.att, batch, a.lora);
    const dqr = new Float32Array(N * NH * HS);
    const dkr = new Float32Array(N * KVH * HS);
    const dv = new Float32Array(N * KVH * HS);
    k.attentionBackward(dqr, dkr, dv, datt, a.att, a.lse, a.qr, a.kr, a.v, batch.starts, B, NH, KVH, HS);
    let dq = new Float32Array(dqr.length);
    let dk = new Float32Array(dkr.length);
    k.ropeBackward(dq, dqr, batch.pos, N, NH, HS, cfg.ropeTheta);
    k.ropeBackward(dk, dkr, batch.pos, N, KVH, HS, cfg.ropeTheta);
    if (w.qNorm && w.kNorm && a.rstdq && a.rstdk) {
      const dqPre = new Float32Array(dq.length);
      const dkPre = new Float32Array(dk.length);
      k.rmsnormBackward(dqPre, g?.qNorm ?? null, dq, a.q, w.qNorm, a.rstdq, N * NH, HS);
      k.rmsnormBackward(dkPre, g?.kNorm ?? null, dk, a.k, w.kNorm, a.rstdk, N * KVH, HS);
      dq = dqPre;
      dk = dkPre;
    }
    const dln1 = new Float32Array(N * C);
    this.projBackward(l, "q_proj", dln1, dq, a.ln1, batch, a.lora);
    this.projBackward(l, "k_proj", dln1, dk, a.ln1, batch, a.lora);
    this.projBackward(l, "v_proj", dln1, dv, a.ln1, batch, a.lora);
    k.rmsnormBackward(dx, g ? g.ln1 : null, dln1, a.x, w.ln1, a.rstd1, N, C);
  }
}
