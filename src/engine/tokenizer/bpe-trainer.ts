// Learns a byte-level BPE (GPT-2 byte alphabet, Qwen2-style pre-tokenizer with single digits) from a
// corpus. Pure and deterministic: same texts and options, same merges. Writing the HF files lives in
// bpe-trainer-files.ts; encoding is left to the HF tokenizer that loads them.
import { MasoError } from "../../errors.js";

/** The pre-tokenizer split pattern (Qwen2's, written as a JS regex): words keep one leading space or mark. */
export const BPE_SPLIT_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// The same pattern without the inline (?i:) group, which JS regexes lack.
const SPLIT_RE =
  /'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** Special tokens every maso BPE carries, in id order after the learned vocabulary. */
export const DEFAULT_SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"] as const;

/** Options of {@link trainBpe}. */
export interface BpeTrainOptions {
  /** Total vocabulary including the 256 byte symbols and the special tokens (default 2048). */
  vocabSize?: number;
  /** Special tokens appended after the learned symbols (default {@link DEFAULT_SPECIAL_TOKENS}). */
  specialTokens?: readonly string[];
  /** Pairs seen fewer times than this are never merged (default 2). */
  minFrequency?: number;
}

/** A learned byte-level BPE: `vocab[id]` is the symbol (GPT-2 byte alphabet), merges in rank order. */
export interface BpeModel {
  vocab: string[];
  merges: [string, string][];
  specialTokens: string[];
}

/** GPT-2's reversible byte -> printable character map. */
export function byteToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = keep.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  return out;
}

/** Splits text into pre-tokens the way the saved tokenizer's pre-tokenizer does. */
export function preTokenize(text: string): string[] {
  return text.match(SPLIT_RE) ?? [];
}

/**
 * Learns merges from `texts` until the vocabulary (bytes + merges + specials) reaches `vocabSize`.
 * Ties in pair frequency go to the pair with the smaller symbol ids, so the result is deterministic.
 * @example
 * const bpe = trainBpe(["the cat sat on the mat"], { vocabSize: 300 });
 * bpe.merges[0]; // e.g. ["Ġ", "t"]
 */
export function trainBpe(texts: Iterable<string>, options: BpeTrainOptions = {}): BpeModel {
  const specialTokens = [...(options.specialTokens ?? DEFAULT_SPECIAL_TOKENS)];
  const vocabSize = options.vocabSize ?? 2048;
  const minFrequency = options.minFrequency ?? 2;
  if (!Number.isInteger(vocabSize) || vocabSize < 256 + specialTokens.length) {
    throw new MasoError(
      "BPE_OPTIONS",
      `vocabSize ${vocabSize} is below 256 bytes + ${specialTokens.length} special tokens`,
      "raise vocabSize",
    );
  }
  const b2u = byteToUnicode();
  const vocab = [...b2u];
  const encoder = new TextEncoder();

  // unique pre-tokens with counts, as symbol-id arrays
  const counts = new Map<string, number>();
  for (const t of texts) for (const w of preTokenize(t)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const words: number[][] = [];
  const freq: number[] = [];
  for (const [w, c] of [...counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    words.push(Array.from(encoder.encode(w)));
    freq.push(c);
  }

  // pair statistics: key = a * 2^16 + b
  const K = 65536;
  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const addPairs = (wi: number, sign: number) => {
    const w = words[wi];
    for (let i = 0; i + 1 < w.length; i++) {
      const key = w[i] * K + w[i + 1];
      pairCount.set(key, (pairCount.get(key) ?? 0) + sign * freq[wi]);
      if (sign > 0) {
        let s = pairWords.get(key);
        if (!s) pairWords.set(key, (s = new Set()));
        s.add(wi);
      }
    }
  };
  for (let wi = 0; wi < words.length; wi++) addPairs(wi, 1);

  const merges: [string, string][] = [];
  while (vocab.length + specialTokens.length < vocabSize) {
    let best = -1;
    let bestCount = 0;
    for (const [key, c] of pairCount) if (c > bestCount || (c === bestCount && c > 0 && key < best)) [best, bestCount] = [key, c];
    if (best < 0 || bestCount < minFrequency) break;
    const a = Math.floor(best / K);
    const b = best % K;
    const id = vocab.length;
    vocab.push(vocab[a] + vocab[b]);
    merges.push([vocab[a], vocab[b]]);
    for (const wi of pairWords.get(best) ?? []) {
      const w = words[wi];
      addPairs(wi, -1);
      const out: number[] = [];
      for (let i = 0; i < w.length; i++) {
        if (i + 1 < w.length && w[i] === a && w[i + 1] === b) {
          out.push(id);
          i++;
        } else out.push(w[i]);
      }
      words[wi] = out;
      addPairs(wi, 1);
    }
    pairCount.delete(best);
    pairWords.delete(best);
  }
  for (const s of specialTokens) {
    if (vocab.includes(s))
      throw new MasoError("BPE_OPTIONS", `special token ${s} collides with a learned symbol`, "rename the special token");
  }
  return { vocab: [...vocab, ...specialTokens], merges, specialTokens };
}
