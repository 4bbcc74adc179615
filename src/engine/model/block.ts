// One decoder block (rmsnorm → q/k/v → q/k-norm → RoPE → attention → o + residual → rmsnorm →
// gate/up → SwiGLU → down + residual) and its backward. The training forward and the sampler's
// KV-cache step both run blockForward, so generation and training compute the same function op for
// op; they differ only in how the block attends and whether it keeps its activations.
//
// Shapes: N rows, C hidden, F mlp, NH/KVH heads, HS head size, R LoRA rank.
import { MasoError } from "../../errors.js";
import { native } from "../../native/binding.js";
import type { LoraTarget as Proj, ModelConfig } from "../config.js";
import { projectionShape } from "../params.js";
import type { AdapterSegment, PackedBatch } from "./batch.js";
import type { Adapter } from "./lora.js";
import { give, take, takeUncleared } from "./scratch.js";
import { type LayerGrads, type LayerWeights, layerDims } from "./weights.js";

const QKV: readonly Proj[] = ["q_proj", "k_proj", "v_proj"];
const GATE_UP: readonly Proj[] = ["gate_proj", "up_proj"];

/** The weights a block reads: a Decoder's, in place. */
export interface BlockModel {
  readonly config: ModelConfig;
  readonly lw: readonly LayerWeights[];
  readonly adapters: ReadonlyMap<string, Adapter>;
}

/** The rows a block runs over. */
export interface BlockRows {
  N: number;
  pos: Int32Array; // (N) position of each row in its sequence
  segments: readonly AdapterSegment[]; // contiguous rows per adapter, covering [0, N)
}

/**
 * Fills att (N,NH*HS) from the roped queries and keys and the values of layer `l`, and lse (N,NH)
 * where it computes one: over whole packed sequences in training, over the KV cache in generation.
 */
export type Attend = (l: number, att: Float32Array, lse: Float32Array, qr: Float32Array, kr: Float32Array, v: Float32Array) => void;

/** Saved activations of one layer, for blockBackward. */
export interface LayerActs {
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

/** out += x W^T (+ b), plus each segment's LoRA (the residual adds); saves the LoRA u's in `saved`. */
function projAdd(
  m: BlockModel,
  l: number,
  p: Proj,
  out: Float32Array,
  inp: Float32Array,
  rows: BlockRows,
  saved: Map<string, Float32Array> | null,
): void {
  const { inDim, outDim } = projectionShape(m.config, p);
  const w = m.lw[l];
  native().matmulForward(out, inp, w.w[p], w.b[p] ?? null, rows.N, inDim, outDim, true);
  loraForward(m, l, [p], [out], inp, rows, saved);
}

/** outs = x W^T (+ b) plus LoRA for projections of one input (q/k/v, gate/up), the base products sent to the engine at once. */
function projs(
  m: BlockModel,
  l: number,
  ps: readonly Proj[],
  outs: Float32Array[],
  inp: Float32Array,
  rows: BlockRows,
  saved: Map<string, Float32Array> | null,
): void {
  const w = m.lw[l];
  const inDim = projectionShape(m.config, ps[0]).inDim;
  const OCs = ps.map((p) => projectionShape(m.config, p).outDim);
  native().matmulForwardParts(
    outs,
    inp,
    ps.map((p) => w.w[p]),
    ps.map((p) => w.b[p] ?? null),
    rows.N,
    inDim,
    OCs,
  );
  loraForward(m, l, ps, outs, inp, rows, saved);
}

/** outs[i] += each segment's LoRA of projection ps[i], the projections of one input in one engine call per segment. */
function loraForward(
  m: BlockModel,
  l: number,
  ps: readonly Proj[],
  outs: readonly Float32Array[],
  inp: Float32Array,
  rows: BlockRows,
  saved: Map<string, Float32Array> | null,
): void {
  const inDim = projectionShape(m.config, ps[0]).inDim;
  rows.segments.forEach((seg, si) => {
    if (!seg.adapter) return;
    const a = m.adapters.get(seg.adapter);
    if (!a) throw new MasoError("ADAPTER_UNKNOWN", `adapter '${seg.adapter}' was removed from the model during generation`);
    // the projections this adapter trains, with their weights
    const targets = ps.flatMap((p, i) => {
      const w = a.layers[l][p];
      return w ? [{ p, out: outs[i], w }] : [];
    });
    if (targets.length === 0) return;
    const R = a.lora.rank;
    const us = targets.map(() => takeUncleared((seg.r1 - seg.r0) * R));
    native().loraForwardParts(
      targets.map((t) => t.out),
      us,
      targets.map((t) => t.w.A),
      targets.map((t) => t.w.B),
      inp,
      seg.r0,
      seg.r1,
      inDim,
      R,
      targets.map((t) => projectionShape(m.config, t.p).outDim),
      a.scale,
    );
    for (const [k, t] of targets.entries()) {
      if (saved) saved.set(`${t.p}:${si}`, us[k]);
      else give(us[k]);
    }
  });
}

/**
 * Runs layer `l` over rows x (N,C) and returns its output (N,C); with `keep`, also the activations
 * blockBackward needs.
 */
export function blockForward(
  m: BlockModel,
  l: number,
  x: Float32Array,
  rows: BlockRows,
  attend: Attend,
  keep: boolean,
): { out: Float32Array; acts: LayerActs | null } {
  const kernels = native();
  const cfg = m.config;
  const { N } = rows;
  const { C, F, NH, KVH, HS, eps } = layerDims(cfg);
  const w = m.lw[l];
  const lora = keep ? new Map<string, Float32Array>() : null;

  const ln1 = takeUncleared(N * C);
  const rstd1 = takeUncleared(N);
  kernels.rmsnormForward(ln1, rstd1, x, w.ln1, N, C, eps);
  const q = takeUncleared(N * NH * HS);
  const k = takeUncleared(N * KVH * HS);
  const v = takeUncleared(N * KVH * HS);
  projs(m, l, QKV, [q, k, v], ln1, rows, lora);
  let qn = q;
  let kn = k;
  let rstdq: Float32Array | undefined;
  let rstdk: Float32Array | undefined;
  if (w.qNorm && w.kNorm) {
    qn = takeUncleared(q.length);
    kn = takeUncleared(k.length);
    rstdq = takeUncleared(N * NH);
    rstdk = takeUncleared(N * KVH);
    kernels.rmsnormForward(qn, rstdq, q, w.qNorm, N * NH, HS, eps);
    kernels.rmsnormForward(kn, rstdk, k, w.kNorm, N * KVH, HS, eps);
  }
  const qr = takeUncleared(q.length);
  const kr = takeUncleared(k.length);
  kernels.ropeForward(qr, qn, rows.pos, N, NH, HS, cfg.ropeTheta);
  kernels.ropeForward(kr, kn, rows.pos, N, KVH, HS, cfg.ropeTheta);
  const att = takeUncleared(N * NH * HS);
  const lse = takeUncleared(N * NH);
  attend(l, att, lse, qr, kr, v);
  const x2 = takeUncleared(N * C);
  x2.set(x);
  projAdd(m, l, "o_proj", x2, att, rows, lora);

  const ln2 = takeUncleared(N * C);
  const rstd2 = takeUncleared(N);
  kernels.rmsnormForward(ln2, rstd2, x2, w.ln2, N, C, eps);
  const gate = takeUncleared(N * F);
  const up = takeUncleared(N * F);
  projs(m, l, GATE_UP, [gate, up], ln2, rows, lora);
  const h = takeUncleared(N * F);
  kernels.swigluForward(h, gate, up, N, F);
  // without saved activations x2 is not needed again: the MLP adds into it in place
  const out = lora ? takeUncleared(N * C) : x2;
  if (lora) out.set(x2);
  projAdd(m, l, "down_proj", out, h, rows, lora);
  if (!lora) {
    give(ln1, rstd1, q, k, v, qn, kn, rstdq, rstdk, qr, kr, att, lse, ln2, rstd2, gate, up, h);
    return { out, acts: null };
  }
  return { out, acts: { x, ln1, rstd1, q, k, v, rstdq, rstdk, qn, kn, qr, kr, att, lse, x2, ln2, rstd2, gate, up, h, lora } };
}

/** dinp += dout · W (and W, b, LoRA gradients where they train) for one projection. */
function projBackward(
  m: BlockModel,
  g: LayerGrads | null,
  l: number,
  p: Proj,
  dinp: Float32Array,
  dout: Float32Array,
  inp: Float32Array,
  batch: PackedBatch,
  saved: Map<string, Float32Array>,
): void {
  const kernels = native();
  const { inDim, outDim } = projectionShape(m.config, p);
  kernels.matmulBackward(dinp, g ? g.w[p] : null, g?.b[p] ?? null, dout, inp, m.lw[l].w[p], batch.N, inDim, outDim);
  batch.segments.forEach((seg, si) => {
    const u = saved.get(`${p}:${si}`);
    if (!u || !seg.adapter) return;
    const a = m.adapters.get(seg.adapter)!;
    const lw = a.layers[l][p]!;
    const R = a.lora.rank;
    const rows = seg.r1 - seg.r0;
    const doutSeg = dout.subarray(seg.r0 * outDim, seg.r1 * outDim);
    const du = take(rows * R);
    kernels.matmulBackward(du, lw.dB, null, doutSeg, u, lw.B, rows, R, outDim);
    kernels.scale(du, a.scale, rows * R);
    kernels.matmulBackward(
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
    give(du);
  });
}

/**
 * Backward of layer `l` over a packed batch: dx (N,C) holds the gradient w.r.t. the layer output on
 * entry, w.r.t. its input on return. Base gradients go to `g` (null: the base is frozen).
 */
export function blockBackward(m: BlockModel, g: LayerGrads | null, l: number, dx: Float32Array, a: LayerActs, batch: PackedBatch): void {
  const kernels = native();
  const cfg = m.config;
  const { N, B } = batch;
  const { C, F, NH, KVH, HS } = layerDims(cfg);
  const w = m.lw[l];

  // MLP branch (reverse of: ln2 -> gate/up -> swiglu -> down -> residual add)
  const dh = take(N * F);
  projBackward(m, g, l, "down_proj", dh, dx, a.h, batch, a.lora);
  const dgate = takeUncleared(N * F);
  const dup = takeUncleared(N * F);
  kernels.swigluBackward(dgate, dup, dh, a.gate, a.up, N, F);
  const dln2 = take(N * C);
  projBackward(m, g, l, "gate_proj", dln2, dgate, a.ln2, batch, a.lora);
  projBackward(m, g, l, "up_proj", dln2, dup, a.ln2, batch, a.lora);
  kernels.rmsnormBackward(dx, g ? g.ln2 : null, dln2, a.x2, w.ln2, a.rstd2, N, C);

  // attention branch (reverse of: ln1 -> q/k/v -> qk-norm -> rope -> attention -> o -> residual add)
  const datt = take(N * NH * HS);
  projBackward(m, g, l, "o_proj", datt, dx, a.att, batch, a.lora);
  const dqr = take(N * NH * HS);
  const dkr = take(N * KVH * HS);
  const dv = take(N * KVH * HS);
  kernels.attentionBackward(dqr, dkr, dv, datt, a.att, a.lse, a.qr, a.kr, a.v, batch.starts, B, NH, KVH, HS);
  let dq = takeUncleared(dqr.length);
  let dk = takeUncleared(dkr.length);
  kernels.ropeBackward(dq, dqr, batch.pos, N, NH, HS, cfg.ropeTheta);
  kernels.ropeBackward(dk, dkr, batch.pos, N, KVH, HS, cfg.ropeTheta);
  if (w.qNorm && w.kNorm && a.rstdq && a.rstdk) {
    const dqPre = take(dq.length);
    const dkPre = take(dk.length);
    kernels.rmsnormBackward(dqPre, g?.qNorm ?? null, dq, a.q, w.qNorm, a.rstdq, N * NH, HS);
    kernels.rmsnormBackward(dkPre, g?.kNorm ?? null, dk, a.k, w.kNorm, a.rstdk, N * KVH, HS);
    give(dq, dk);
    dq = dqPre;
    dk = dkPre;
  }
  const dln1 = take(N * C);
  projBackward(m, g, l, "q_proj", dln1, dq, a.ln1, batch, a.lora);
  projBackward(m, g, l, "k_proj", dln1, dk, a.ln1, batch, a.lora);
  projBackward(m, g, l, "v_proj", dln1, dv, a.ln1, batch, a.lora);
  kernels.rmsnormBackward(dx, g ? g.ln1 : null, dln1, a.x, w.ln1, a.rstd1, N, C);
  give(dh, dgate, dup, dln2, datt, dqr, dkr, dv, dq, dk, dln1);
}

/** Hands a layer's saved activations back to the scratch pool once its backward has run. */
export function releaseActs(a: LayerActs): void {
  give(a.x, a.ln1, a.rstd1, a.q, a.k, a.v, a.rstdq, a.rstdk, a.qn, a.kn, a.qr, a.kr, a.att, a.lse, a.x2, a.ln2, a.rstd2, a.gate, a.up, a.h);
  give(...a.lora.values());
}
