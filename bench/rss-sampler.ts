// Samples this process's resident memory from a worker thread every few milliseconds, so the
// samples keep coming while the main thread is inside a long native call, then answers the peak
// over any time window (e.g. one phase of an RL step). Benchmarks only; Linux (/proc/self/status).
import { Worker } from "node:worker_threads";

const SAMPLER = `
const { workerData } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
const buf = new Float64Array(workerData.buf);
const slots = (buf.length - 1) / 2;
setInterval(() => {
  const m = /VmRSS:\\s+(\\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
  if (!m) return;
  const i = buf[0] % slots;
  buf[1 + 2 * i] = performance.timeOrigin + performance.now();
  buf[2 + 2 * i] = Number(m[1]) / 1024;
  buf[0]++;
}, workerData.everyMs);
`;

export interface RssSampler {
  /** Peak RSS (MiB) over samples taken between the two wall-clock times (ms since the epoch). */
  peakMb(fromMs: number, toMs: number): number | null;
  stop(): Promise<void>;
}

export function startRssSampler(everyMs = 20, slots = 1 << 16): RssSampler {
  const buf = new SharedArrayBuffer(8 * (1 + 2 * slots));
  const worker = new Worker(SAMPLER, { eval: true, workerData: { buf, everyMs } });
  worker.unref();
  const view = new Float64Array(buf);
  return {
    peakMb(fromMs, toMs) {
      let peak: number | null = null;
      const n = Math.min(view[0], slots);
      for (let i = 0; i < n; i++) {
        const t = view[1 + 2 * i];
        if (t >= fromMs && t <= toMs) peak = Math.max(peak ?? 0, view[2 + 2 * i]);
      }
      return peak === null ? null : Math.round(peak);
    },
    stop: () => worker.terminate().then(() => undefined),
  };
}
