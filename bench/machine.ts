// What every benchmark row says it ran on: the CPU, the kernels' instruction-set level, the GEMM
// library and the kernel thread count. Figures from two machines (or two builds on one) are only
// comparable when these match, so each printed row carries them.
import { cpus } from "node:os";
import { addonChoice, native } from "../src/native/binding.js";

/** This process's machine and engine build, for a benchmark row. */
export function machine() {
  const info = native().info();
  return {
    cpu: `${cpus()[0]?.model.trim() ?? "unknown"} x${cpus().length}`,
    kernel_level: addonChoice().level,
    blas: info.gemm === "portable" ? "portable" : `${info.gemm} ${info.blasConfig.trim()}`,
    threads: info.threads,
  };
}
