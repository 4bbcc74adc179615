// Input checks shared by the estimators and losses: shapes, finiteness, option ranges.
// Every failure is a MasoError naming the argument and the caller; nothing here computes results.

import { MasoError } from "../errors.js";
import type { Numbers, TokenLayout } from "./types.js";

/** Checks offsets and mask and returns the number of sequences S. */
export function checkLayout(layout: TokenLayout, where: string): number {
  const { offsets, mask } = layout;
  if (!offsets || offsets.length < 1) {
    throw new MasoError("RL_SHAPE", `${where}: offsets must have S + 1 entries`, "pass [0] for an empty batch");
  }
  if (offsets[0] !== 0) throw new MasoError("RL_SHAPE", `${where}: offsets[0] must be 0, got ${offsets[0]}`, "offsets start at 0");
  for (let s = 1; s < offsets.length; s++) {
    const o = offsets[s];
    if (!Number.isInteger(o) || o < offsets[s - 1]) {
      throw new MasoError(
        "RL_SHAPE",
        `${where}: offsets must be non-decreasing integers (offsets[${s}] = ${o})`,
        "offsets[s] is where sequence s starts",
      );
    }
  }
  const n = offsets[offsets.length - 1];
  if (!mask || mask.length !== n) {
    throw new MasoError("RL_SHAPE", `${where}: mask has ${mask?.length} entries, offsets say ${n} tokens`, "mask is per token");
  }
  for (let t = 0; t < n; t++) {
    if (mask[t] !== 0 && mask[t] !== 1) {
      throw new MasoError("RL_INPUT", `${where}: mask[${t}] = ${mask[t]}, expected 0 or 1`, "mark response tokens with 1, others with 0");
    }
  }
  return offsets.length - 1;
}

/** Checks that `values` has `length` finite entries. */
export function checkNumbers(name: string, values: Numbers | undefined, length: number, where: string): Numbers {
  if (!values) throw new MasoError("RL_INPUT", `${where}: ${name} is required`, `pass ${name}`);
  if (values.length !== length) {
    throw new MasoError(
      "RL_SHAPE",
      `${where}: ${name} has ${values.length} entries, expected ${length}`,
      "per-token arrays follow the offsets",
    );
  }
  for (let i = 0; i < length; i++) {
    if (!Number.isFinite(values[i])) {
      throw new MasoError(
        "RL_NONFINITE",
        `${where}: ${name}[${i}] is ${values[i]}`,
        "look for NaN/Inf upstream (engine output, reward function)",
      );
    }
  }
  return values;
}

/** Checks a numeric option: finite and inside [min, max]. */
export function checkOption(
  name: string,
  value: number,
  where: string,
  min = Number.NEGATIVE_INFINITY,
  max = Number.POSITIVE_INFINITY,
): number {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new MasoError(
      "RL_OPTION",
      `${where}: option ${name} = ${value} is out of range [${min}, ${max}]`,
      `set ${name} to a finite value in range`,
    );
  }
  return value;
}

/** Sum of the mask over sequence s. */
export function maskedCount(layout: TokenLayout, s: number): number {
  let c = 0;
  for (let t = layout.offsets[s]; t < layout.offsets[s + 1]; t++) c += layout.mask[t];
  return c;
}
