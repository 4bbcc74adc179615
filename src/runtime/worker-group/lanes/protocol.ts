// Messages between a lane generator (main thread) and its lanes (worker threads). Weights travel
// as SharedArrayBuffer-backed arrays: structured clone shares them, so a lane reads the memory the
// main thread's updates write.
import type { LoraConfig, ModelConfig } from "../../../engine/config.js";
import type { SamplerOptions } from "../../../engine/generate/index.js";
import type { Precision } from "../../../native/binding.js";
import type { GeneratorRequest, GeneratorResult } from "../generator.js";

/** A tokenizer as data: the byte tokenizer's JSON or an HF tokenizer's files. */
export type TokenizerSource = { kind: "maso-byte"; json: unknown } | { kind: "hf"; files: Readonly<Record<string, string>> };

/** What a lane is started with. */
export interface LaneData {
  config: ModelConfig;
  base: Float32Array;
  adapters: { name: string; lora: LoraConfig; params: Float32Array }[];
  tokenizer: TokenizerSource;
  sampler: Omit<SamplerOptions, "tokenizer">;
  /** how much nicer than the process the lane runs (lane-priority.ts) */
  nice: number;
}

/** `stream`: send the request's tokens back as they are sampled (before its result). */
export type ToLane =
  | { kind: "submit"; id: number; request: GeneratorRequest; precision: Precision; stream: boolean }
  | { kind: "weightsChanged" };

/** Counters a lane sends with every answer: its sampler's totals so far. */
export interface LaneCounters {
  steps: number;
  decodeTokens: number;
  busyMs: number;
}

export interface LaneError {
  code: string | null;
  message: string;
  hint: string;
}

export type FromLane =
  | { kind: "tokens"; id: number; tokens: number[] }
  | { kind: "result"; id: number; result: GeneratorResult; counters: LaneCounters }
  | { kind: "failed"; id: number; error: LaneError; counters: LaneCounters };
