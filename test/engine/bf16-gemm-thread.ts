// One lane of test/engine/bf16-lanes.int.test.ts: bf16 products of many row counts against one
// shared weight, each through the weight cache and through a fresh conversion; posts how many
// differed. `outdate`: also report the weights changed every few products (copies are redone).
import { parentPort, workerData } from "node:worker_threads";
import { native } from "../../src/native/binding.js";

const { rows, IC, OC, weight, outdate } = workerData as { rows: number[]; IC: number; OC: number; weight: Float32Array; outdate: boolean };
const kernels = native();
kernels.setThreads(1);
kernels.setPrecision("bf16", false);
let differed = 0;
// every other product has the row count all lanes share: a hot shape, often in use somewhere while
// another lane's new shapes push it out of the cache
for (const [i, N] of rows.flatMap((n) => [n, 256]).entries()) {
  const inp = new Float32Array(N * IC).map((_, j) => Math.sin(j * 0.37 + N));
  const cached = new Float32Array(N * OC);
  const fresh = new Float32Array(N * OC);
  kernels.matmulForward(cached, inp, weight, null, N, IC, OC, false);
  kernels.gemm(false, true, N, OC, IC, 1, inp, IC, weight, IC, 0, fresh, OC);
  if (cached.some((v, j) => !Object.is(v, fresh[j]))) differed++;
  if (outdate && i % 10 === 0) kernels.weightsChanged();
}
parentPort!.postMessage(differed);
