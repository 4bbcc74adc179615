// The benchmark's figures from its calls' times (sdk-calls.ts): the gateway's overhead share of
// non-streaming calls and the medians of streamed ones. Pure arithmetic; runs nothing.
import type { Timed } from "./sdk-calls.js";

import { median } from "../median.js";

/** Milliseconds to three decimals, for the printed JSON. */
export const ms = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Non-streaming calls: the time beyond generation, summed over calls, as a share of generation
 * time — all of it (`share`: HTTP, SDK, handler) and the handler's part (`server`: validation,
 * parsing, records) — from the Server-Timing the gateway sends.
 */
export function overheadShares(calls: readonly Timed[]) {
  const sum = (f: (t: Timed) => number) => calls.reduce((a, t) => a + f(t), 0);
  const gen = sum((t) => t.generationMs ?? Number.NaN);
  return {
    share: sum((t) => t.wallMs - (t.generationMs ?? Number.NaN)) / gen,
    server: sum((t) => (t.handlerMs ?? Number.NaN) - (t.generationMs ?? Number.NaN)) / gen,
  };
}

/** Streamed calls: median time to the first text delta (of calls that sent text) and median wall time (ms). */
export function streamFigures(calls: readonly Timed[]) {
  return {
    ttft_ms: ms(median(calls.flatMap((t) => (t.ttftMs === undefined ? [] : [t.ttftMs])))),
    total_ms: ms(median(calls.map((t) => t.wallMs))),
  };
}
