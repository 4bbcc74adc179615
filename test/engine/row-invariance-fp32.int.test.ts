// fp32 products against weights with invariant rows (the sampler's setting) come out row-invariant
// too: gemm_nt_rows at every row count, so a request's log-probs have the same bits alone, in any
// decode batch or in any packed prefill. The BLAS (sgemv at one row, sgemm above 64 rows or below
// K 48) sums a row in an order that changes with the row count.
import { describe, expect, it } from "vitest";
import { native } from "../../src/native/binding.js";
import { rowInvariance } from "./row-invariance.js";

// gemm_nt_rows runs on x86-64 at every level (SSE at the baseline); elsewhere the BLAS stays
describe.skipIf(process.arch !== "x64")("row-invariant fp32 products", () => {
  it(`at this build's kernel level (${native().info().level})`, () => {
    const r = rowInvariance("fp32");
    expect(r.products).toBeGreaterThan(300);
    expect(r.mismatches).toEqual([]);
  }, 120_000);
});
