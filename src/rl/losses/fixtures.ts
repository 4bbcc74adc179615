// Fixed inputs shared by the loss tests and the torch reference test: a packed batch whose log-ratios
// sit well away from every clip boundary, so finite differences are valid. Test data only.

import type { AggregationMode } from "./aggregate.js";

/** Sequences: [p r r r] [r r p] [] [p p] [r r r] — p = prompt (mask 0), r = response; the empty and all-prompt ones test skipping. */
export const offsets = [0, 4, 7, 7, 9, 12];
export const mask = [0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1];
const logRatio = [0, 0.05, 0.4, -0.5, -0.1, 1.5, 0, 0, 0, 0.1, -0.3, 0.15];
export const oldLogp = mask.map((_, t) => -1 - 0.1 * t);
export const logp = oldLogp.map((o, t) => o + logRatio[t]);
export const advantages = [0, 1, 1, -1, 0.5, -1, 0, 0, 0, -2, 0.7, -0.3];
export const refLogp = logp.map((l, t) => l + [0.3, -0.2, 0.5, 0.1, -0.4, 0.25, 0, 0.1, 0, -0.15, 0.35, -0.05][t]);
export const entropy = mask.map((_, t) => 0.5 + 0.1 * ((t * 3) % 7));
export const returns = mask.map((_, t) => 0.2 * ((t * 5) % 7) - 0.4);
export const oldValues = returns.map((r, t) => r + [0.1, -0.5, 0.3, 0.05, -0.15, 0.6, 0, 0, 0, -0.35, 0.02, 0.45][t]);
// values moved from oldValues by ±0.1..0.4, so some tokens hit the 0.2 clip and some do not
export const values = oldValues.map((v, t) => v + [0, 0.1, -0.3, 0.35, -0.05, -0.25, 0, 0, 0, 0.15, -0.4, 0.3][t]);
export const modes: AggregationMode[] = ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "token-sum-norm"];
