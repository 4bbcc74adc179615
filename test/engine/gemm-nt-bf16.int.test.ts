// bf16 products against weights (A W^T) come out row-invariant: a row's bits do not depend on how
// many rows share the call, on its place among them, or on the thread count. The sampler's decode
// batches and prefills mix sequences as they arrive, and bf16 turns a last-bit difference into a
// different sampled token. Both kernels: the one this CPU picks, and the AVX512-BF16 one forced
// in a child process (on an AMX CPU it otherwise runs only for K not a multiple of 32). Projections
// of one input run as one product (matmulForwardParts) and must give each its own bits.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { native } from "../../src/native/binding.js";
import { type Report, rowInvariance } from "./row-invariance.js";

const bf16 = native().bf16();
const script = fileURLToPath(new URL("./row-invariance.ts", import.meta.url));

describe.skipIf(!bf16.onednn || bf16.rowKernel === "none")("row-invariant bf16 products", () => {
  it(`with this CPU's kernel (${bf16.rowKernel})`, () => {
    const r = rowInvariance();
    expect(r.kernel).toBe(bf16.rowKernel);
    expect(r.products).toBeGreaterThan(300);
    expect(r.mismatches).toEqual([]);
  }, 120_000);

  it("with the AVX512-BF16 kernel", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", script], {
      env: { ...process.env, MASO_BF16_KERNEL: "avx512" },
      encoding: "utf8",
    });
    const r = JSON.parse(out) as Report;
    expect(r.kernel).toBe("avx512bf16");
    expect(r.mismatches).toEqual([]);
  }, 120_000);
});
