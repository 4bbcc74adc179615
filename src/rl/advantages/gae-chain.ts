// The backward GAE recursion over one chain of (value, reward) steps — agents of a step, steps of an
// episode, or tokens of actions — and the two piecewise forms (action, token level) the runtime runs
// across worker groups. Scalar math over per-record arrays; no roles or layouts.

import { MasoError } from "../../errors.js";
import { checkOption } from "../validate.js";
import type { AgentChain, ChainPiece, ChainSample, EstimatorOptions, GaeContinuation, SampleMeta } from "./types.js";
import { whitenByScope } from "./whiten.js";

/**
 * GAE over a chain: δ_i = r_i + γ·V_{i+1} − V_i and A_i = δ_i + γλ·A_{i+1}, where element i+1 after the
 * last one is `next` (terminal: 0, 0). Running a chain in pieces — passing each piece's first value and
 * advantage as the previous piece's `next` — equals running it whole; this is how worker groups that own
 * different agents of an episode chain their advantages by exchanging two scalars.
 *
 * @example
 * gaeChain([0.5, 0.2], [0, 1], 0.9, 0.8); // δ = [0.9·0.2 − 0.5, 1 − 0.2]; A = [δ0 + 0.72·0.8, 0.8]
 */
export function gaeChain(
  values: ArrayLike<number>,
  rewards: ArrayLike<number>,
  gamma: number,
  lambda: number,
  next: GaeContinuation = { nextValue: 0, nextAdvantage: 0 },
): Float64Array {
  checkOption("gamma", gamma, "gaeChain", 0, 1);
  checkOption("lambda", lambda, "gaeChain", 0, 1);
  const n = values.length;
  const adv = new Float64Array(n);
  let nextV = next.nextValue;
  let carry = next.nextAdvantage;
  for (let i = n - 1; i >= 0; i--) {
    const delta = rewards[i] + gamma * nextV - values[i];
    carry = delta + gamma * lambda * carry;
    adv[i] = carry;
    nextV = values[i];
  }
  return adv;
}

/** The continuation after an episode's last record: terminal (0, 0) unless `done === false`, then V(after). */
export function episodeEnd(last: SampleMeta, where: string): GaeContinuation {
  if (last.done !== false) return { nextValue: 0, nextAdvantage: 0 };
  if (last.bootstrapValue === undefined) {
    throw new MasoError(
      "RL_INPUT",
      `${where}: episode ${last.episode} ends with done = false but has no bootstrapValue`,
      "set bootstrapValue to V(state after the last record), or done = true for a terminal episode",
    );
  }
  return { nextValue: last.bootstrapValue, nextAdvantage: 0 };
}

const discount = (o: EstimatorOptions) => ({ gamma: o.gamma ?? 0.99, lambda: o.lambda ?? 0.95 });

/** Action level: one value (at the first response token) and one summed reward per record. */
function actionPiece(samples: readonly ChainSample[], options: EstimatorOptions, next: GaeContinuation): ChainPiece {
  const { gamma, lambda } = discount(options);
  const values = samples.map((s) => s.values[0]);
  const a = gaeChain(
    values,
    samples.map((s) => s.rewards.reduce((x, y) => x + y, 0)),
    gamma,
    lambda,
    next,
  );
  return {
    advantages: samples.map((s, i) => new Float32Array(s.rewards.length).fill(a[i])),
    returns: samples.map((s, i) => new Float32Array(s.rewards.length).fill(a[i] + values[i])),
    head: { nextValue: values[0], nextAdvantage: a[0] },
  };
}

/** Token level: the response tokens of the piece's records, in order, form one chain. */
function tokenPiece(samples: readonly ChainSample[], options: EstimatorOptions, next: GaeContinuation): ChainPiece {
  const { gamma, lambda } = discount(options);
  const values = samples.flatMap((s) => Array.from(s.values));
  const a = gaeChain(
    values,
    samples.flatMap((s) => Array.from(s.rewards)),
    gamma,
    lambda,
    next,
  );
  const advantages: Float32Array[] = [];
  const returns: Float32Array[] = [];
  let o = 0;
  for (const s of samples) {
    const R = s.rewards.length;
    advantages.push(Float32Array.from(a.subarray(o, o + R)));
    const base = o;
    returns.push(Float32Array.from({ length: R }, (_, t) => a[base + t] + values[base + t]));
    o += R;
  }
  return { advantages, returns, head: { nextValue: values[0], nextAdvantage: a[0] } };
}

const whitenRaw: AgentChain["finish"] = (raw, layout, samples, options) =>
  whitenByScope(raw, layout, samples, options.normalize ?? "role", options.eps ?? 1e-8).values;

/** GAE run piecewise over an episode's agents, at action level (gae-action). */
export const actionChain: AgentChain = { level: "action", piece: actionPiece, finish: whitenRaw };

/** GAE run piecewise over an episode's agents, at token level (gae-token). */
export const tokenChain: AgentChain = { level: "token", piece: tokenPiece, finish: whitenRaw };
