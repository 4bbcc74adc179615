// `--precision auto|fp32|bf16` on `maso train` and `maso eval`: one GEMM precision for every model
// of the run, over each model's own `precision` setting.
import { isPrecisionSetting, type PrecisionSetting } from "../engine/precision.js";
import { type Parsed, str } from "./args.js";
import { usageError } from "./exit-codes.js";

/** The flag's value, or undefined when absent; anything but auto/fp32/bf16 is a usage error. */
export function precisionFlag(p: Parsed, command: string): PrecisionSetting | undefined {
  const v = str(p, "precision");
  if (v === undefined) return undefined;
  if (!isPrecisionSetting(v)) throw usageError(`${command}: --precision must be auto, fp32 or bf16, got '${v}'`, command);
  return v;
}

/** A raw run config with every model's `precision` set (unchanged when `precision` is undefined). */
export function withPrecision(raw: unknown, precision: PrecisionSetting | undefined): unknown {
  if (precision === undefined || typeof raw !== "object" || raw === null) return raw;
  const r = raw as Record<string, unknown>;
  if (typeof r.models !== "object" || r.models === null) return raw;
  const models = Object.fromEntries(
    Object.entries(r.models as Record<string, unknown>).map(([n, m]) => [n, { ...(m as object), precision }]),
  );
  return { ...r, models };
}
