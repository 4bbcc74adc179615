// Mechanistic initialisation: plants a previous-token head (layer 0) and an induction head (layer 1)
// into a freshly initialised Llama decoder, so the model can copy an unseen name from its prompt
// before training starts. Learning that circuit from scratch is the slow part of pretraining: on
// this CPU budget (~1 M tokens) neither maso's engine nor PyTorch leaves the plateau (see
// docs/base-model.md), so the base model starts with it and training only has to learn to use it.
//
// Residual layout (model width C ≥ 192): dims [0, E) hold token content (random unit-variance
// embeddings), dim E holds a constant shared by every token (a bias direction: it shifts every logit
// equally, so the tied LM head ignores it), dims [E+1, E+1+K) receive the previous token's content.
// With RoPE, a query/key pair i scores |q||k|·cos(θᵢΔ + φ): the previous-token head uses the four
// fastest pairs with φ = −θᵢ (peak at Δ = 1); the induction head matches content only on the slow
// pairs, which barely rotate over the context (the config uses a large rope theta for that).
//
// Copy heads (layer 2 by default): their value/output is fixed to copy a position's token content,
// their query/key start near zero and are learned. With the output fixed, the gradient on where to
// look is direct, so pretraining learns *which* name to copy (the selection the induction head cannot
// make) in a few hundred steps; learning both halves at once is the plateau random init never leaves.
// The planted entries are returned as pins: pretraining keeps them fixed (train-loop.ts).
import { MasoError } from "maso";
import { type ModelConfig, type Rng, fillNormal, type ParamTable } from "maso/engine";

/** Strengths of the planted circuit (defaults measured on random-repeat sequences, see the test). */
export interface InductionInitOptions {
  /** Token-content width E. Default 128. */
  contentDims?: number;
  /** Width K of the matched content (slow RoPE pairs × 2). Default 16. */
  matchDims?: number;
  /** Previous-token head: |q|·|k| per fast pair. Default 100. */
  prevStrength?: number;
  /** Induction head query scale. Default 10. */
  matchStrength?: number;
  /** Induction head output scale (copied content vs the current token's own embedding). Default 20. */
  copyStrength?: number;
  /** Final norm weight: tempers the logits of the large planted vectors. Default 0.3. */
  finalNorm?: number;
  /** Layers that get copy heads (KV head 1 and its query heads). Default [2]; each must be ≥ 2. */
  copyLayers?: readonly number[];
}

/** Per tensor, a mask of the entries that carry the planted circuit (1 = keep fixed). */
export type PinnedEntries = Map<string, Uint8Array>;

const CONSTANT = 8;
const FAST_PAIRS = 4;

/** `rows` random orthonormal rows of length `cols` (a random projection that keeps unit-variance inputs unit-variance). */
function orthoRows(rows: number, cols: number, rng: Rng): Float32Array[] {
  const out: Float32Array[] = [];
  while (out.length < rows) {
    const v = new Float32Array(cols);
    fillNormal(v, rng, 1);
    for (const u of out) {
      let d = 0;
      for (let i = 0; i < cols; i++) d += v[i] * u[i];
      for (let i = 0; i < cols; i++) v[i] -= d * u[i];
    }
    let n = 0;
    for (let i = 0; i < cols; i++) n += v[i] * v[i];
    n = Math.sqrt(n);
    if (n < 1e-6) continue;
    for (let i = 0; i < cols; i++) v[i] /= n;
    out.push(v);
  }
  return out;
}

/**
 * Overwrites the embeddings, parts of layers 0–1 and the copy heads of `params` (a fresh init of
 * `cfg`) with the copying circuit; every other weight keeps its random init, and the output
 * projections that would disturb the circuit start at zero. Returns the planted entries.
 * @example const pins = plantInductionCircuit(model.params, cfg, createRng(42));
 */
export function plantInductionCircuit(params: ParamTable, cfg: ModelConfig, rng: Rng, opts: InductionInitOptions = {}): PinnedEntries {
  const E = opts.contentDims ?? 128;
  const K = opts.matchDims ?? 16;
  const C = cfg.hiddenSize;
  const HS = cfg.headDim;
  const half = HS / 2;
  // q/k norm would rescale the planted queries and keys; the content projection needs HS ≤ E
  const copyLayers = opts.copyLayers ?? (cfg.numLayers > 2 ? [2] : []);
  const fits =
    cfg.numLayers >= 2 &&
    copyLayers.every((l) => Number.isInteger(l) && l >= 2 && l < cfg.numLayers) &&
    E + 1 + K <= C &&
    K / 2 <= half - FAST_PAIRS &&
    HS <= E &&
    cfg.numKvHeads >= 2;
  if (!fits || cfg.tieWordEmbeddings !== true || cfg.qkNorm)
    throw new MasoError(
      "INDUCTION_INIT",
      `cannot plant the copying circuit in d=${C}, ${cfg.numLayers} layers, ${cfg.numKvHeads} KV heads, head dim ${HS}`,
      "needs ≥ 2 layers, copy layers in [2, layers), ≥ 2 KV heads, tied embeddings, no q/k norm and hidden size ≥ contentDims + 1 + matchDims",
    );
  const CONST = E;
  const PREV = E + 1;
  const groupSize = cfg.numHeads / cfg.numKvHeads;
  const inductionHead = groupSize; // first query head of KV group 1
  // head dims of the slow pairs: the last K/2 pairs, both halves
  const slow = Array.from({ length: K }, (_, m) => (m < K / 2 ? half - K / 2 + m : HS - K / 2 + (m - K / 2)));
  const theta = (i: number) => cfg.ropeTheta ** ((-2 * i) / HS);

  // embeddings: content dims, constant dim, nothing else
  const emb = params.get("model.embed_tokens.weight");
  emb.fill(0);
  const row = new Float32Array(E);
  for (let t = 0; t < cfg.vocabSize; t++) {
    fillNormal(row, rng, 1);
    emb.set(row, t * C);
    emb[t * C + CONST] = CONSTANT;
  }
  const match = orthoRows(K, E, rng);
  const content = orthoRows(HS, E, rng);

  const w = (layer: number, name: string) => params.get(`model.layers.${layer}.${name}.weight`);
  const set = (m: Float32Array, cols: number, r: number, c: number, v: number) => {
    m[r * cols + c] = v;
  };
  for (let l = 0; l < cfg.numLayers; l++) {
    w(l, "self_attn.o_proj").fill(0);
    w(l, "mlp.down_proj").fill(0);
    if (l < 2) {
      w(l, "self_attn.q_proj").fill(0);
      w(l, "self_attn.k_proj").fill(0);
      w(l, "self_attn.v_proj").fill(0);
      w(l, "input_layernorm").fill(1);
    }
  }

  // layer 0, query head 0 / KV head 0: attend to the previous position, carry its match content
  const s = Math.sqrt(opts.prevStrength ?? 100);
  const [q0, k0, v0, o0] = ["q_proj", "k_proj", "v_proj", "o_proj"].map((n) => w(0, `self_attn.${n}`));
  for (let i = 0; i < FAST_PAIRS; i++) {
    set(k0, C, i, CONST, s / CONSTANT);
    set(q0, C, i, CONST, (s * Math.cos(theta(i))) / CONSTANT);
    set(q0, C, i + half, CONST, (-s * Math.sin(theta(i))) / CONSTANT);
  }
  const nHeadsDim = cfg.numHeads * HS;
  for (let m = 0; m < K; m++) {
    for (let e = 0; e < E; e++) set(v0, C, slow[m], e, match[m][e]);
    set(o0, nHeadsDim, PREV + m, slow[m], 1);
  }

  // layer 1, query head `inductionHead` / KV head 1: match the current token against each position's
  // previous token, copy that position's content back into the content dims
  const [q1, k1, v1, o1] = ["q_proj", "k_proj", "v_proj", "o_proj"].map((n) => w(1, `self_attn.${n}`));
  const qs = opts.matchStrength ?? 10;
  const cs = opts.copyStrength ?? 20;
  const qRow = inductionHead * HS;
  for (let m = 0; m < K; m++) {
    set(k1, C, HS + slow[m], PREV + m, 1);
    for (let e = 0; e < E; e++) set(q1, C, qRow + slow[m], e, qs * match[m][e]);
  }
  // a copying head writes what KV head 1's value reads (the content projection) back, ×cs
  const writeCopy = (o: Float32Array, head: number) => {
    for (let r = 0; r < HS; r++) for (let e = 0; e < E; e++) set(o, nHeadsDim, e, head * HS + r, cs * content[r][e]);
  };
  for (let r = 0; r < HS; r++) for (let e = 0; e < E; e++) set(v1, C, HS + r, e, content[r][e]);
  writeCopy(o1, inductionHead);
  params.get("model.norm.weight").fill(opts.finalNorm ?? 0.3);

  // copy heads: KV head 1 reads the same content projection as the induction head, its query heads
  // write it back like the induction head does; their queries and keys start small so attention starts near uniform
  const pins: PinnedEntries = new Map();
  const rows = (name: string, from: number, to: number, cols: number) => pinWhere(pins, params, name, cols, (r) => r >= from && r < to);
  const cols = (name: string, from: number, to: number, width: number) =>
    pinWhere(pins, params, name, width, (_r, c) => c >= from && c < to);
  for (const l of copyLayers) {
    const [q, k, v, o] = ["q_proj", "k_proj", "v_proj", "o_proj"].map((n) => w(l, `self_attn.${n}`));
    fillNormal(q.subarray(groupSize * HS * C, 2 * groupSize * HS * C), rng, 0.02);
    fillNormal(k.subarray(HS * C, 2 * HS * C), rng, 0.02);
    v.set(v1.subarray(HS * C, 2 * HS * C), HS * C);
    for (let h = groupSize; h < 2 * groupSize; h++) writeCopy(o, h);
    rows(`model.layers.${l}.self_attn.v_proj.weight`, HS, 2 * HS, C);
    cols(`model.layers.${l}.self_attn.o_proj.weight`, groupSize * HS, 2 * groupSize * HS, nHeadsDim);
    pinWhere(pins, params, `model.layers.${l}.input_layernorm.weight`, C, () => true);
  }
  // the previous-token head (query head 0, KV head 0) and the induction head (query head G, KV head 1)
  for (const [l, head, kv] of [
    [0, 0, 0],
    [1, inductionHead, 1],
  ]) {
    rows(`model.layers.${l}.self_attn.q_proj.weight`, head * HS, (head + 1) * HS, C);
    rows(`model.layers.${l}.self_attn.k_proj.weight`, kv * HS, (kv + 1) * HS, C);
    rows(`model.layers.${l}.self_attn.v_proj.weight`, kv * HS, (kv + 1) * HS, C);
    cols(`model.layers.${l}.self_attn.o_proj.weight`, head * HS, (head + 1) * HS, nHeadsDim);
    pinWhere(pins, params, `model.layers.${l}.input_layernorm.weight`, C, () => true);
  }
  // token content is what every planted head matches and copies
  pinWhere(pins, params, "model.embed_tokens.weight", C, () => true);
  return pins;
}

/** Marks the entries of a row-major [·, cols] tensor where `at(row, col)` holds. */
function pinWhere(pins: PinnedEntries, params: ParamTable, name: string, cols: number, at: (r: number, c: number) => boolean): void {
  const n = params.get(name).length;
  let mask = pins.get(name);
  if (!mask) pins.set(name, (mask = new Uint8Array(n)));
  for (let i = 0; i < n; i++) if (at(Math.floor(i / cols), i % cols)) mask[i] = 1;
}
