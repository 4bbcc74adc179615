// Transparent huge pages for large engine buffers (native/memory.cc): the advice covers a buffer's
// whole 2 MiB pages, skips small buffers, never changes contents, and the engine's large allocations
// (a model's weights and gradients, AdamW's moments, pooled scratch) take it. Where the system leaves
// huge pages to programs (THP "madvise"), advised memory is backed by them once written; there the
// process's AnonHugePages must grow. Off Linux, or on a kernel built without THP, the advice is
// refused and 0 returned; with THP "never" the kernel takes it and keeps small pages.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ParamTable } from "../../src/engine/params.js";
import { createAdamW } from "../../src/engine/optim/adamw.js";
import { give, take } from "../../src/engine/model/scratch.js";
import { hugePages, native } from "../../src/native/binding.js";

const kernels = native();
const MiB = 1 << 20;
const THP = "/sys/kernel/mm/transparent_hugepage/enabled";
/** The system's THP mode ("always", "madvise", "never"), or null where there is none. */
const mode = existsSync(THP) ? (/\[(\w+)\]/.exec(readFileSync(THP, "utf8"))?.[1] ?? null) : null;

/** This process's anonymous memory in huge pages, bytes. */
function anonHuge(): number {
  const m = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync("/proc/self/smaps_rollup", "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

describe("huge-page advice", () => {
  it("covers a large buffer's whole 2 MiB pages and skips buffers under 4 MiB", () => {
    const big = new Float32Array((16 * MiB) / 4);
    const advised = kernels.adviseHugePages(big);
    if (mode === null) return expect(advised).toBe(0);
    // the unaligned ends are left out: at most one 2 MiB page short at each end
    expect(advised).toBeGreaterThanOrEqual(12 * MiB);
    expect(advised).toBeLessThanOrEqual(16 * MiB);
    expect(advised % (2 * MiB)).toBe(0);
    expect(kernels.adviseHugePages(new Float32Array((3 * MiB) / 4))).toBe(0);
    expect(kernels.adviseHugePages(new Float32Array(0))).toBe(0);
  });

  it("leaves contents as they were", () => {
    const x = new Float32Array((8 * MiB) / 4).map((_, i) => i * 0.5);
    const copy = Float32Array.from(x);
    expect(hugePages(x)).toBe(x);
    expect(x).toEqual(copy);
  });

  it.skipIf(mode !== "madvise")("backs the engine's large buffers with huge pages once they are written (THP madvise)", () => {
    const before = anonHuge();
    const n = (32 * MiB) / 4;
    const table = new ParamTable([{ name: "w", shape: [n] }]);
    const grads = new ParamTable([{ name: "w", shape: [n] }]);
    const opt = createAdamW([{ name: "base", params: table, grads }], { lr: 1e-3 });
    const scratch = take(n);
    table.data.fill(1);
    grads.data.fill(0.5);
    opt.step(); // writes both moments
    scratch.fill(2);
    // five buffers of 32 MiB (weights, gradients, two moments, scratch): all but their unaligned ends
    expect(anonHuge() - before).toBeGreaterThanOrEqual(5 * 28 * MiB);
    give(scratch);
  });
});
