// One lane of test/engine/bf16-lanes.int.test.ts: bf16 products of many shapes against one shared
// weight buffer, each through the weight cache and through a fresh conversion; posts how many
// differed. A shape's row count alone does not make a new primitive where oneDNN takes it at run
// time (native/gemm_bf16.cc), so each product also reads its own (OC', IC') prefix of the buffer as a
// dense weight. `outdate`: also report the weights changed every few products (copies are redone).
import { parentPort, workerData } from "node:worker_threads";
import { native } from "../../src/native/binding.js";

const { rows, IC, OC, weight, outdate } = workerData as { rows: number[]; IC: number; OC: number; weight: Float32Array; outdate: boolean };
const kernels = native();
kernels.setThreads(1);
kernels.setPrecision("bf16", false);
let differed = 0;
// every other product has the shape all lanes share: a hot shape, often in use somewhere while
// another lane's new shapes push it out of the cache
const shapes = rows.flatMap((n) => [
  { N: n, oc: 1 + (n % OC), ic: 1 + ((n * 7) % IC) },
  { N: 256, oc: OC, ic: IC },
]);
for (const [i, { N, oc, ic }] of shapes.entries()) {
  const w = weight.subarray(0, oc * ic);
  const inp = new Float32Array(N * ic).map((_, j) => Math.sin(j * 0.37 + N));
  const cached = new Float32Array(N * oc);
  const fresh = new Float32Array(N * oc);
  kernels.matmulForward(cached, inp, w, null, N, ic, oc, false);
  kernels.gemm(false, true, N, oc, ic, 1, inp, ic, w, ic, 0, fresh, oc);
  if (cached.some((v, j) => !Object.is(v, fresh[j]))) differed++;
  if (outdate && i % 10 === 0) kernels.weightsChanged();
}
parentPort!.postMessage(differed);
