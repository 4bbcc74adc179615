// What a `precision` setting means on this machine. "auto" picks bf16 where it is fast and
// reproducible: the addon links oneDNN and the CPU multiplies bf16 natively (AVX512-BF16, or AMX
// with it), which also runs the row-invariant products that make bf16 generation independent of
// batching; elsewhere bf16 would be emulated, slower than fp32. Resolved once, where a run's config
// is resolved, so the effective config (and a --resume of it) names the precision the run used.
import { type Bf16Support, native, type Precision } from "../native/binding.js";

export type PrecisionSetting = Precision | "auto";
const PRECISION_SETTINGS: readonly string[] = ["auto", "fp32", "bf16"];

/** Whether a value a user wrote is a precision setting. */
export function isPrecisionSetting(v: unknown): v is PrecisionSetting {
  return typeof v === "string" && PRECISION_SETTINGS.includes(v);
}

/** The GEMM precision "auto" stands for on this CPU with this addon. */
export function autoPrecision(b: Bf16Support = native().bf16()): Precision {
  return b.onednn && b.rowKernel !== "none" ? "bf16" : "fp32";
}

/** A setting as a concrete precision ("auto": {@link autoPrecision}). */
export function resolvePrecision(setting: PrecisionSetting): Precision {
  return setting === "auto" ? autoPrecision() : setting;
}
