// Runs new tokens through a Decoder's own weights (params, layer views, adapters: read in place,
// never copied) and writes their K/V into the paged cache: a packed prefill of whole prompts, or one
// token per sequence over its cache. Each layer is the training forward's blockForward, attending
// over the cache instead of the packed sequences, so the log-probs it yields match the training
// forward's; it saves nothing.
//
// Shapes: N new tokens, B sequences, M logit rows, C hidden, NH/KVH heads, HS head size, V vocab.
import { native } from "../../native/binding.js";
import { decodeKernels } from "../../native/decode-binding.js";
import type { ModelConfig } from "../config.js";
import type { AdapterSegment } from "../model/batch.js";
import { type Attend, blockForward } from "../model/block.js";
import type { Decoder } from "../model/decoder.js";
import { give, takeUncleared } from "../model/scratch.js";
import type { KvCache } from "./kv-cache.js";

/**
 * How the new tokens attend: each new token (row b) attends to the first lens[b] cached positions
 * (its own included) of the blocks table[tableStarts[b] ..]. One token per sequence in decode, every
 * prompt token in prefill: a token's attention is then one computation however it reached the
 * cache, so a prefix decoded in one turn and prefilled afresh in the next gives the same bits.
 */
export interface CacheAttention {
  table: Int32Array;
  tableStarts: Int32Array;
  lens: Int32Array;
}

/** One forward step over new tokens. */
export interface StepInput {
  ids: Int32Array; // (N) token ids
  pos: Int32Array; // (N) their positions in their sequences
  slots: Int32Array; // (N) cache pool row that receives each token's K and V
  segments: readonly AdapterSegment[]; // contiguous rows per adapter, covering [0, N)
  attention: CacheAttention;
  logitRows: Int32Array; // (M) rows whose next-token logits are wanted
}

/** Runs the step, fills the cache rows and returns raw logits (M,V) (no temperature applied); give() them back when done. */
export function runStep(model: Decoder, cache: KvCache, input: StepInput): Float32Array {
  const kernels = native();
  kernels.setPrecision(model.precision, true); // a row gets the same bits in any batch
  const cfg = model.config;
  const N = input.ids.length;
  const C = cfg.hiddenSize;
  const V = cfg.vocabSize;
  const M = input.logitRows.length;
  const rows = { N, pos: input.pos, segments: input.segments };
  const attend = cacheAttention(cfg, cache, input);
  let x: Float32Array = takeUncleared(N * C);
  kernels.embeddingForward(x, input.ids, model.params.get("model.embed_tokens.weight"), N, C, V);
  for (let l = 0; l < cfg.numLayers; l++) {
    const out = blockForward(model, l, x, rows, attend, false).out;
    give(x);
    x = out;
  }
  // rmsnorm is per row, so normalising only the gathered rows equals gathering normalised rows
  const xs = new Float32Array(M * C);
  kernels.gatherRows(xs, x, input.logitRows, M, C, N);
  give(x);
  const hs = new Float32Array(M * C);
  kernels.rmsnormForward(hs, new Float32Array(M), xs, model.params.get("model.norm.weight"), M, C, cfg.rmsNormEps);
  const logits = takeUncleared(M * V); // the caller gives it back once sampled
  kernels.matmulForward(logits, hs, model.head(), null, M, C, V, false);
  return logits;
}

/** Writes the new rows' K/V into the cache, then attends over it (lse is left unused). */
function cacheAttention(cfg: ModelConfig, cache: KvCache, input: StepInput): Attend {
  const { numHeads: NH, numKvHeads: KVH, headDim: HS } = cfg;
  const N = input.ids.length;
  const { table, tableStarts, lens } = input.attention;
  return (l, att, _lse, qr, kr, v) => {
    const decode = decodeKernels();
    decode.kvCacheWrite(cache.k[l], cache.v[l], kr, v, input.slots, N, KVH * HS, cache.poolRows);
    decode.attentionDecode(att, qr, cache.k[l], cache.v[l], table, tableStarts, lens, N, NH, KVH, HS, cache.blockSize, cache.poolBlocks);
  };
}
