// Runs new tokens through a Decoder's own weights (params, layer views, adapters: read in place,
// never copied) and writes their K/V into the paged cache: a packed prefill of whole prompts, or one
// token per sequence over its cache. The op order mirrors Decoder.layerForward step for step, so the
// log-probs it yields match the training forward; it must not diverge from it, and saves nothing.
//
// Shapes: N new tokens, B sequences, M logit rows, C hidden, F mlp, NH/KVH heads, HS head size,
// V vocab, R LoRA rank, W = KVH*HS.
import { MasoError } from "../../errors.js";
import { native } from "../../native/binding.js";
import { decodeKernels } from "../../native/decode-binding.js";
import type { LoraTarget } from "../config.js";
import type { AdapterSegment } from "../model/batch.js";
import type { Decoder } from "../model/decoder.js";
import { layerDims } from "../model/weights.js";
import { projectionShape } from "../params.js";
import type { KvCache } from "./kv-cache.js";

/** How the new tokens attend. */
export type AttentionPlan =
  /** Whole prompts from position 0, packed: the training attention kernel over `starts` (B+1). */
  | { kind: "packed"; B: number; starts: Int32Array }
  /**
   * One token per sequence (N = B), attending to its first lens[b] cached positions (its own
   * included) whose blocks are table[tableStarts[b] ..].
   */
  | { kind: "paged"; table: Int32Array; tableStarts: Int32Array; lens: Int32Array };

/** One forward step over new tokens. */
export interface StepInput {
  ids: Int32Array; // (N) token ids
  pos: Int32Array; // (N) their positions in their sequences
  slots: Int32Array; // (N) cache pool row that receives each token's K and V
  segments: readonly AdapterSegment[]; // contiguous rows per adapter, covering [0, N)
  attention: AttentionPlan;
  logitRows: Int32Array; // (M) rows whose next-token logits are wanted
}

/** Runs the step, fills the cache rows and returns raw logits (M,V) (no temperature applied). */
export function runStep(model: Decoder, cache: KvCache, input: StepInput): Float32Array {
  const k = native();
  const cfg = model.config;
  const N = input.ids.length;
  const C = cfg.hiddenSize;
  const V = cfg.vocabSize;
  const M = input.logitRows.length;
  let x: Float32Array = new Float32Array(N * C);
  k.embeddingForward(x, input.ids, model.params.get("model.embed_tokens.weight"), N, C, V);
  for (let l = 0; l < cfg.numLayers; l++) x = layerStep(model, cache, l, x, input);
  // rmsnorm is per row, so normalising only the gathered rows equals gathering normalised rows
  const xs = new Float32Array(M * C);
  k.gatherRows(xs, x, input.logitRows, M, C, N);
  const hs = new Float32Array(M * C);
  k.rmsnormForward(hs, new Float32Array(M), xs, model.params.get("model.norm.weight"), M, C, cfg.rmsNormEps);
  const logits = new Float32Array(M * V);
  k.matmulForward(logits, hs, model.head(), null, M, C, V, false);
  return logits;
}

function proj(model: Decoder, l: number, p: LoraTarget, out: Float32Array, inp: Float32Array, input: StepInput, acc: boolean): void {
  const k = native();
  const { inDim, outDim } = projectionShape(model.config, p);
  const w = model.lw[l];
  k.matmulForward(out, inp, w.w[p], w.b[p] ?? null, input.ids.length, inDim, outDim, acc);
  for (const seg of input.segments) {
    if (!seg.adapter) continue;
    const a = model.adapters.get(seg.adapter);
    if (!a) throw new MasoError("ADAPTER_UNKNOWN", `adapter '${seg.adapter}' was removed from the model during generation`);
    const lw = a.layers[l][p];
    if (!lw) continue;
    const R = a.lora.rank;
    const rows = seg.r1 - seg.r0;
    const u = new Float32Array(rows * R);
    k.matmulForward(u, inp.subarray(seg.r0 * inDim, seg.r1 * inDim), lw.A, null, rows, inDim, R, false);
    k.scale(u, a.scale, rows * R);
    k.matmulForward(out.subarray(seg.r0 * outDim, seg.r1 * outDim), u, lw.B, null, rows, R, outDim, true);
  }
}

/** One decoder block over the new rows; returns the block output (N,C). */
function layerStep(model: Decoder, cache: KvCache, l: number, x: Float32Array, input: StepInput): Float32Array {
  const k = native();
  const cfg = model.config;
  const N = input.ids.length;
  const { C, F, NH, KVH, HS, eps } = layerDims(cfg);
  const w = model.lw[l];

  const ln1 = new Float32Array(N * C);
  k.rmsnormForward(ln1, new Float32Array(N), x, w.ln1, N, C, eps);
  const q = new Float32Array(N * NH * HS);
  const kk = new Float32Array(N * KVH * HS);
  const v = new Float32Array(N * KVH * HS);
  proj(model, l, "q_proj", q, ln1, input, false);
  proj(model, l, "k_proj", kk, ln1, input, false);
  proj(model, l, "v_proj", v, ln1, input, false);
  let qn = q;
  let kn = kk;
  if (w.qNorm && w.kNorm) {
    qn = new Float32Array(q.length);
    kn = new Float32Array(kk.length);
    k.rmsnormForward(qn, new Float32Array(N * NH), q, w.qNorm, N * NH, HS, eps);
    k.rmsnormForward(kn, new Float32Array(N * KVH), kk, w.kNorm, N * KVH, HS, eps);
  }
  const qr = new Float32Array(q.length);
  const kr = new Float32Array(kk.length);
  k.ropeForward(qr, qn, input.pos, N, NH, HS, cfg.ropeTheta);
  k.ropeForward(kr, kn, input.pos, N, KVH, HS, cfg.ropeTheta);
  const d = decodeKernels();
  d.kvCacheWrite(cache.k[l], cache.v[l], kr, v, input.slots, N, KVH * HS, cache.poolRows);
  const att = new Float32Array(N * NH * HS);
  const plan = input.attention;
  if (plan.kind === "packed") {
    k.attentionForward(att, new Float32Array(N * NH), qr, kr, v, plan.starts, plan.B, NH, KVH, HS);
  } else {
    d.attentionDecode(
      att,
      qr,
      cache.k[l],
      cache.v[l],
      plan.table,
      plan.tableStarts,
      plan.lens,
      N,
      NH,
      KVH,
      HS,
      cache.blockSize,
      cache.poolBlocks,
    );
  }
  const x2 = x.slice();
  proj(model, l, "o_proj", x2, att, input, true);

  const ln2 = new Float32Array(N * C);
  k.rmsnormForward(ln2, new Float32Array(N), x2, w.ln2, N, C, eps);
  const gate = new Float32Array(N * F);
  const up = new Float32Array(N * F);
  proj(model, l, "gate_proj", gate, ln2, input, false);
  proj(model, l, "up_proj", up, ln2, input, false);
  const h = new Float32Array(N * F);
  k.swigluForward(h, gate, up, N, F);
  const out = x2.slice();
  proj(model, l, "down_proj", out, h, input, true);
  return out;
}
