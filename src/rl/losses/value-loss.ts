// The critic's loss: (optionally clipped) squared or Huber error against returns, with dloss/dvalue.
// For an action-level critic, pass a mask that marks the one token whose value is V(observation).

import { MasoError } from "../../errors.js";
import type { LossResult, Numbers, TokenLayout } from "../types.js";
import { checkLayout, checkNumbers, checkOption } from "../validate.js";
import { type AggregationOptions, aggregationWeights } from "./aggregate.js";

/** Current values, values at sampling time (for clipping) and return targets, per token. */
export interface ValueLossInput extends TokenLayout {
  values: Numbers;
  returns: Numbers;
  /** Required when `clip` is set. */
  oldValues?: Numbers;
}

/** Value loss settings. */
export interface ValueLossOptions extends AggregationOptions {
  /** Coefficient of the term, default 1. */
  coef?: number;
  /** Clip range ε: V is kept within oldValue ± ε (PPO-style, pessimistic max). Off when undefined. */
  clip?: number;
  /** Huber δ: quadratic within δ, linear beyond. Squared error ½e² when undefined. */
  huber?: number;
}

/** Metrics of the value loss. */
export interface ValueMetrics {
  valueLoss: number;
  /** Fraction of tokens where the clipped error was larger (gradient zeroed). */
  valueClipFrac: number;
  valueMean: number;
  returnMean: number;
  /** 1 − Var(R − V)/Var(R) over response tokens (0 when Var(R) = 0). */
  explainedVariance: number;
}

function errorTerm(e: number, huber: number | undefined): [loss: number, dloss: number] {
  if (huber === undefined || Math.abs(e) <= huber) return [0.5 * e * e, e];
  return [huber * (Math.abs(e) - 0.5 * huber), huber * Math.sign(e)];
}

/**
 * coef · aggregate(max(f(V − R), f(clip(V, V_old ± ε) − R))) with f = ½e² or Huber.
 *
 * @example
 * valueLoss({ offsets: [0, 2], mask: [1, 1], values, oldValues, returns }, { clip: 0.2, huber: 10 });
 */
export function valueLoss(input: ValueLossInput, options: ValueLossOptions = {}): LossResult<ValueMetrics> {
  const where = "valueLoss";
  const S = checkLayout(input, where);
  const n = input.offsets[S];
  checkNumbers("values", input.values, n, where);
  checkNumbers("returns", input.returns, n, where);
  const coef = checkOption("coef", options.coef ?? 1, where, 0);
  const clip = options.clip === undefined ? undefined : checkOption("clip", options.clip, where, 0);
  const huber = options.huber === undefined ? undefined : checkOption("huber", options.huber, where, Number.MIN_VALUE);
  if (clip !== undefined) {
    if (!input.oldValues)
      throw new MasoError(
        "RL_INPUT",
        `${where}: clip is set but oldValues are missing`,
        "pass the values recorded at sampling time, or drop clip",
      );
    checkNumbers("oldValues", input.oldValues, n, where);
  }
  const w = aggregationWeights(input, options, where);
  const dvalue = new Float32Array(n);
  let loss = 0;
  let count = 0;
  let clipped = 0;
  let vSum = 0;
  let rSum = 0;
  for (let t = 0; t < n; t++) {
    if (input.mask[t] === 0) continue;
    const v = input.values[t];
    const r = input.returns[t];
    let [l, d] = errorTerm(v - r, huber);
    if (clip !== undefined) {
      const old = input.oldValues![t];
      const vc = old + Math.min(Math.max(v - old, -clip), clip);
      const [l2] = errorTerm(vc - r, huber);
      if (l2 > l) {
        l = l2;
        d = 0;
        clipped++;
      }
    }
    loss += coef * w[t] * l;
    dvalue[t] = coef * w[t] * d;
    count++;
    vSum += v;
    rSum += r;
  }
  return {
    loss,
    metrics: {
      valueLoss: loss,
      valueClipFrac: count ? clipped / count : 0,
      valueMean: count ? vSum / count : 0,
      returnMean: count ? rSum / count : 0,
      explainedVariance: explainedVariance(input),
    },
    grads: { dvalue },
  };
}

function explainedVariance(input: ValueLossInput): number {
  const r: number[] = [];
  const e: number[] = [];
  for (let t = 0; t < input.mask.length; t++) {
    if (input.mask[t] === 0) continue;
    r.push(input.returns[t]);
    e.push(input.returns[t] - input.values[t]);
  }
  const variance = (x: number[]) => {
    const m = x.reduce((a, b) => a + b, 0) / Math.max(x.length, 1);
    return x.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(x.length, 1);
  };
  const vr = variance(r);
  return vr === 0 ? 0 : 1 - variance(e) / vr;
}
