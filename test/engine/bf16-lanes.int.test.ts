// bf16 GEMMs on several threads at once, as lanes run them: each thread's shapes push the others'
// oneDNN primitives out of the shared primitive cache, and one thread outdates the shared weight
// copies while the others read them. Nothing may be freed under a reader (that crashed the
// process) and every product must equal a fresh conversion's. Skipped without oneDNN.
import { describe, expect, it } from "vitest";
import { native } from "../../src/native/binding.js";
import { startThread } from "../../src/start-thread.js";

const [IC, OC, LANES] = [64, 48, 3];

describe.skipIf(!native().bf16().onednn)("bf16 GEMMs on concurrent lanes", () => {
  it("survive primitive eviction and weight-copy refresh, with exact results", async () => {
    const weight = new Float32Array(new SharedArrayBuffer(IC * OC * 4)).map((_, j) => Math.cos(j * 0.11));
    // 3 lanes x 400 shapes (row count, weight width and depth): well past the 256-primitive cache, each lane in its own order
    const rows = (lane: number) => Array.from({ length: 400 }, (_, i) => ((i * (7 + 2 * lane) + lane * 31) % 800) + 2);
    const differed = await Promise.all(
      Array.from({ length: LANES }, (_, lane) => {
        const t = startThread(import.meta.url, "./bf16-gemm-thread", { rows: rows(lane), IC, OC, weight, outdate: lane === 0 });
        return new Promise<number>((resolve, reject) => {
          t.once("message", (n: number) => {
            resolve(n);
            void t.terminate();
          });
          t.once("error", reject);
        });
      }),
    );
    expect(differed).toEqual([0, 0, 0]);
  }, 60_000);
});
