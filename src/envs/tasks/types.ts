// Task shapes shared by the synthetic generators and the JSONL loaders, plus the split container.
// Types only.

import type { CodeTest } from "../code-verifier/types.js";

/** Dataset split. Test entities/parameters never occur in train. */
export type Split = "train" | "dev" | "test";

/** One array of tasks per split. */
export interface Splits<T> {
  train: T[];
  dev: T[];
  test: T[];
}

/** True for `{ train: [at least one], dev?: [...], test?: [...] }`: the task splits a workflow or agent module exports. */
export function isTaskSplits(v: unknown): boolean {
  const t = v as { train?: unknown; dev?: unknown; test?: unknown } | undefined;
  return (
    !!t &&
    Array.isArray(t.train) &&
    t.train.length > 0 &&
    (t.dev === undefined || Array.isArray(t.dev)) &&
    (t.test === undefined || Array.isArray(t.test))
  );
}

/** A question with one or more acceptable short answers (scored by EM/F1). */
export interface QaTask {
  id: string;
  question: string;
  answers: string[];
  /** Number of reasoning hops (synthetic tasks only). */
  hops?: number;
  /** Names of every entity on the reasoning chain, answer included (synthetic tasks only). */
  entities?: string[];
  /** Ids of the facts the answer rests on (synthetic tasks only). */
  supportingFacts?: string[];
}

/** A programming problem whose solution must define `entry` (when given) and pass `tests`. */
export interface CodeTask {
  id: string;
  problem: string;
  tests: CodeTest[];
  entry?: string;
  /** A known-good JavaScript solution (synthetic tasks only). */
  reference?: string;
}

/** A math word problem with a reference answer (compared with checkMath). */
export interface MathTask {
  id: string;
  problem: string;
  answer: string;
  /** Number of arithmetic operations (synthetic tasks only). */
  ops?: number;
}

/** Fractions of items per split; they are normalised to sum to 1. */
export interface SplitFractions {
  train: number;
  dev: number;
  test: number;
}

export const DEFAULT_FRACTIONS: SplitFractions = { train: 0.7, dev: 0.1, test: 0.2 };

/** Cuts `items` (already shuffled) into train/dev/test by fractions; every split gets ≥1 item when possible. */
export function cutSplits<T>(items: readonly T[], fractions: SplitFractions = DEFAULT_FRACTIONS): Splits<T> {
  const total = fractions.train + fractions.dev + fractions.test;
  const n = items.length;
  let nTest = Math.round((n * fractions.test) / total);
  let nDev = Math.round((n * fractions.dev) / total);
  if (n >= 3) {
    nTest = Math.max(1, nTest);
    nDev = Math.max(1, nDev);
  }
  const nTrain = Math.max(0, n - nTest - nDev);
  return { train: items.slice(0, nTrain), dev: items.slice(nTrain, nTrain + nDev), test: items.slice(nTrain + nDev) };
}
