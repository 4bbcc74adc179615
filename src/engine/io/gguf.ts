// Exports a Decoder (optionally with a LoRA adapter merged in) to a GGUF v3 file llama.cpp loads:
// llama, qwen2 (q/k/v bias) and qwen3 (q/k norm) architectures, F32 or F16 matrices, with the
// tokenizer's metadata. It reads the live weights and never modifies them.
//
// Tensor map (HF name -> GGUF name): model.embed_tokens -> token_embd, model.norm -> output_norm,
// lm_head -> output (left out when tied; llama.cpp then reuses token_embd), per layer N:
// input_layernorm -> blk.N.attn_norm, q/k/v/o_proj -> blk.N.attn_q/attn_k/attn_v/attn_output,
// q_norm/k_norm -> blk.N.attn_q_norm/attn_k_norm, post_attention_layernorm -> blk.N.ffn_norm,
// gate/up/down_proj -> blk.N.ffn_gate/ffn_up/ffn_down. GGUF dims are innermost first: an HF
// (out, in) matrix is written with dims [in, out] and the same bytes.
//
// RoPE layout: HF rotates halves (x_i, x_{i+HS/2}); llama.cpp's "llama" arch rotates adjacent
// pairs (x_2i, x_2i+1), so q/k rows (and biases) are permuted per head exactly as llama.cpp's
// convert_hf_to_gguf.py does. qwen2/qwen3 use llama.cpp's NeoX rope (= rotate_half): no permute.
import { MasoError } from "../../errors.js";
import { encodeBf16, encodeF16 } from "./float-convert.js";
import { writeAtomic, writeFully } from "../../fs/atomic-file.js";
import type { Decoder } from "../model/decoder.js";
import { projectionShape } from "../params.js";
import type { Tokenizer } from "../tokenizer/types.js";
import { tokenizerMetadata } from "./gguf-tokenizer.js";
import { mergedWeight } from "./merge-adapter.js";
import { GGML_TYPE, type GgufTensorInfo, type GgufValue, encodeGgufHeader, tensorBytes, tensorPadding } from "./gguf-writer.js";

/** The ggml type of the matrices, and llama.cpp's file type (LLAMA_FTYPE_ALL_F32 / MOSTLY_F16 / MOSTLY_BF16), per dtype. */
const MATRIX_TYPE = { f32: GGML_TYPE.F32, f16: GGML_TYPE.F16, bf16: GGML_TYPE.BF16 } as const;
const FILE_TYPE = { f32: 0, f16: 1, bf16: 32 } as const;

/** Options of {@link writeGguf}. */
export interface GgufExportOptions {
  /**
   * Matrix precision: "f32" (default, exact), "f16" or "bf16" (half the size; bf16 keeps fp32's
   * range, f16 three more bits of mantissa); norms and biases stay F32.
   */
  dtype?: "f32" | "f16" | "bf16";
  /** Tokenizer to describe in the file (byte tokenizer or HF byte-level BPE). Without it llama.cpp needs one supplied. */
  tokenizer?: Tokenizer;
  /** Merge this adapter into the matrices: W + (alpha / rank) B A. */
  mergeAdapter?: string;
  /** general.name; default "maso-<architecture>". */
  name?: string;
  /**
   * llama.cpp pre-tokenizer for HF tokenizers. Default: the one matching tokenizer.json's split
   * pattern (qwen2, llama-bpe, gpt-2), else "qwen2" for Qwen models and "llama-bpe" for llama.
   */
  pre?: string;
}

interface PlannedTensor {
  info: GgufTensorInfo;
  /** F32 values, already merged and permuted */
  values: () => Float32Array;
}

/** Metadata and tensors of the GGUF file for `model` (data computed lazily, one tensor at a time). */
export function planGguf(model: Decoder, opts: GgufExportOptions = {}): { metadata: Map<string, GgufValue>; tensors: PlannedTensor[] } {
  const cfg = model.config;
  const arch = cfg.architecture;
  if (arch === "qwen3" && cfg.qkvBias) throw new MasoError("GGUF_ARCH", "llama.cpp's qwen3 has no q/k/v bias", "export as a qwen2 config");
  if (arch !== "qwen3" && cfg.qkNorm) throw new MasoError("GGUF_ARCH", `llama.cpp's ${arch} has no q/k norm`, "use architecture qwen3");
  if (arch !== "llama" && cfg.oBias) throw new MasoError("GGUF_ARCH", `llama.cpp's ${arch} has no output-projection bias`);
  const adapter = opts.mergeAdapter === undefined ? undefined : model.adapters.get(opts.mergeAdapter);
  if (opts.mergeAdapter !== undefined && !adapter) {
    throw new MasoError("GGUF_ADAPTER", `adapter '${opts.mergeAdapter}' does not exist on this model`);
  }
  const dtype = opts.dtype ?? "f32";
  if (!(dtype in MATRIX_TYPE)) throw new MasoError("GGUF_DTYPE", `dtype must be "f32", "f16" or "bf16", got ${String(opts.dtype)}`);
  const matrixType = MATRIX_TYPE[dtype];

  const metadata = new Map<string, GgufValue>();
  const u32 = (key: string, value: number) => metadata.set(`${arch}.${key}`, { type: "u32", value });
  metadata.set("general.architecture", { type: "string", value: arch });
  metadata.set("general.name", { type: "string", value: opts.name ?? `maso-${arch}` });
  metadata.set("general.file_type", { type: "u32", value: FILE_TYPE[dtype] });
  u32("context_length", cfg.maxPositionEmbeddings);
  u32("embedding_length", cfg.hiddenSize);
  u32("block_count", cfg.numLayers);
  u32("feed_forward_length", cfg.intermediateSize);
  u32("attention.head_count", cfg.numHeads);
  u32("attention.head_count_kv", cfg.numKvHeads);
  u32("attention.key_length", cfg.headDim);
  u32("attention.value_length", cfg.headDim);
  u32("rope.dimension_count", cfg.headDim);
  u32("vocab_size", cfg.vocabSize);
  metadata.set(`${arch}.rope.freq_base`, { type: "f32", value: cfg.ropeTheta });
  metadata.set(`${arch}.attention.layer_norm_rms_epsilon`, { type: "f32", value: cfg.rmsNormEps });
  if (opts.tokenizer) {
    const fallbackPre = arch === "llama" ? "llama-bpe" : "qwen2";
    for (const [k, v] of tokenizerMetadata(opts.tokenizer, { vocabSize: cfg.vocabSize, pre: opts.pre, fallbackPre })) metadata.set(k, v);
  }

  const tensors: PlannedTensor[] = [];
  const p = model.params;
  const add = (name: string, shape: number[], values: () => Float32Array) => {
    const matrix = shape.length === 2;
    tensors.push({ info: { name, dims: [...shape].reverse(), type: matrix ? matrixType : GGML_TYPE.F32 }, values });
  };
  const V = cfg.vocabSize;
  const C = cfg.hiddenSize;
  add("token_embd.weight", [V, C], () => p.get("model.embed_tokens.weight"));
  for (let l = 0; l < cfg.numLayers; l++) {
    const w = model.lw[l];
    const blk = `blk.${l}`;
    add(`${blk}.attn_norm.weight`, [C], () => w.ln1);
    const projs = [
      ["q_proj", "attn_q"],
      ["k_proj", "attn_k"],
      ["v_proj", "attn_v"],
      ["o_proj", "attn_output"],
    ] as const;
    for (const [proj, gname] of projs) {
      const { inDim, outDim } = projectionShape(cfg, proj);
      const heads = proj === "q_proj" ? cfg.numHeads : cfg.numKvHeads;
      const rope = arch === "llama" && (proj === "q_proj" || proj === "k_proj");
      add(`${blk}.${gname}.weight`, [outDim, inDim], () => {
        const merged = mergedWeight(model, l, proj, adapter?.name);
        return rope ? permuteRope(merged, heads, cfg.headDim, inDim) : merged;
      });
      const bias = w.b[proj];
      if (bias) add(`${blk}.${gname}.bias`, [outDim], () => (rope ? permuteRope(bias, heads, cfg.headDim, 1) : bias));
      else if (arch === "qwen2" && proj !== "o_proj") add(`${blk}.${gname}.bias`, [outDim], () => new Float32Array(outDim));
    }
    if (w.qNorm && w.kNorm) {
      const { qNorm, kNorm } = w;
      add(`${blk}.attn_q_norm.weight`, [cfg.headDim], () => qNorm);
      add(`${blk}.attn_k_norm.weight`, [cfg.headDim], () => kNorm);
    }
    add(`${blk}.ffn_norm.weight`, [C], () => w.ln2);
    for (const [proj, gname] of [
      ["gate_proj", "ffn_gate"],
      ["up_proj", "ffn_up"],
      ["down_proj", "ffn_down"],
    ] as const) {
      const { inDim, outDim } = projectionShape(cfg, proj);
      add(`${blk}.${gname}.weight`, [outDim, inDim], () => mergedWeight(model, l, proj, adapter?.name));
    }
  }
  add("output_norm.weight", [C], () => p.get("model.norm.weight"));
  if (!cfg.tieWordEmbeddings) add("output.weight", [V, C], () => p.get("lm_head.weight"));
  return { metadata, tensors };
}

/**
 * HF rotate-half row order -> llama.cpp's adjacent-pair order, per head: new row 2j+s of a head takes
 * old row s*HS/2+j (reshape (heads, 2, HS/2, cols), swap axes 1 and 2).
 */
export function permuteRope(w: Float32Array, heads: number, HS: number, cols: number): Float32Array {
  const out = new Float32Array(w.length);
  const half = HS / 2;
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < half; j++) {
      for (let s = 0; s < 2; s++) {
        const src = (h * HS + s * half + j) * cols;
        const dst = (h * HS + 2 * j + s) * cols;
        out.set(w.subarray(src, src + cols), dst);
      }
    }
  }
  return out;
}

function tensorData(info: GgufTensorInfo, values: Float32Array): Uint8Array {
  if (info.type === GGML_TYPE.F32) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const h = new Uint16Array(values.length);
  (info.type === GGML_TYPE.BF16 ? encodeBf16 : encodeF16)(values, h);
  return new Uint8Array(h.buffer);
}

/**
 * Writes `model` as a GGUF v3 file (atomically: a temp file renamed into place).
 *
 * @example
 * await writeGguf("model.gguf", model, { tokenizer, dtype: "f16", mergeAdapter: "planner" });
 */
export async function writeGguf(path: string, model: Decoder, opts: GgufExportOptions = {}): Promise<void> {
  const { metadata, tensors } = planGguf(model, opts);
  const header = encodeGgufHeader(
    metadata,
    tensors.map((t) => t.info),
  );
  await writeAtomic(path, async (fh) => {
    let pos = 0;
    const put = async (b: Uint8Array) => {
      await writeFully(fh, b, pos);
      pos += b.length;
    };
    await put(header);
    for (const t of tensors) {
      const data = tensorData(t.info, t.values());
      if (data.length !== tensorBytes(t.info)) throw new MasoError("GGUF_TENSOR", `tensor ${t.info.name} has the wrong size`);
      await put(data);
      await put(tensorPadding(t.info));
    }
  });
}
