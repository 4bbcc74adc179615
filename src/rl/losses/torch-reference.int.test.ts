// Parity with an independent torch/autograd implementation (test/reference/rl_losses.py, float64) on
// the shared fixture: PPO clip (every aggregation, asymmetric and dual clip), KL k1/k2/k3, entropy and
// clipped/Huber value loss. Skips, saying so, only when Debian's python3 with torch is absent.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { maxAbsDiff } from "../gradcheck.js";
import type { LossResult } from "../types.js";
import { entropyBonus } from "./entropy-bonus.js";
import * as fx from "./fixtures.js";
import { klPenaltyLoss } from "./kl-penalty.js";
import { ppoClipLoss } from "./ppo-clip.js";
import { valueLoss } from "./value-loss.js";

const PYTHON = "/usr/bin/python3";
const SCRIPT = fileURLToPath(new URL("../../../test/reference/rl_losses.py", import.meta.url));
const hasTorch = existsSync(PYTHON) && spawnSync(PYTHON, ["-c", "import torch"], { stdio: "ignore" }).status === 0;
if (!hasTorch) console.warn(`SKIPPED torch parity: ${PYTHON} with torch not found (apt install python3-torch)`);

type Case = Record<string, unknown> & { kind: "ppo" | "kl" | "entropy" | "value" };

const cases: Case[] = [
  ...fx.modes.flatMap((mode) => [
    { kind: "ppo" as const, mode, clipLow: 0.2, clipHigh: 0.28, normConst: 5 },
    { kind: "ppo" as const, mode, clipLow: 0.2, clipHigh: 0.2, dualClip: 3, normConst: 5 },
  ]),
  ...(["k1", "k2", "k3"] as const).map((estimator) => ({ kind: "kl" as const, estimator, coef: 0.3, mode: "seq-mean-token-mean" })),
  { kind: "entropy", coef: 0.01, mode: "token-mean" },
  { kind: "value", clip: 0.2, mode: "token-mean" },
  { kind: "value", clip: 0.2, huber: 0.25, coef: 0.5, mode: "seq-mean-token-sum" },
];

function ours(c: Case): { r: LossResult<object>; grad: Float32Array } {
  const layout = { offsets: fx.offsets, mask: fx.mask };
  const o = c as never;
  switch (c.kind) {
    case "ppo": {
      const r = ppoClipLoss({ ...layout, logp: fx.logp, oldLogp: fx.oldLogp, advantages: fx.advantages }, o);
      return { r, grad: r.grads.dlogp! };
    }
    case "kl": {
      const r = klPenaltyLoss({ ...layout, logp: fx.logp, refLogp: fx.refLogp }, o);
      return { r, grad: r.grads.dlogp! };
    }
    case "entropy": {
      const r = entropyBonus({ ...layout, entropy: fx.entropy }, o);
      return { r, grad: r.grads.dentropy! };
    }
    case "value": {
      const r = valueLoss({ ...layout, values: fx.values, oldValues: fx.oldValues, returns: fx.returns }, o);
      return { r, grad: r.grads.dvalue! };
    }
  }
}

describe.skipIf(!hasTorch)("losses match torch autograd (test/reference/rl_losses.py)", () => {
  const run = () => {
    const input = JSON.stringify({ ...fx, cases });
    const p = spawnSync(PYTHON, [SCRIPT], { input, encoding: "utf8", timeout: 60_000 });
    if (p.status !== 0) throw new Error(`reference script failed: ${p.stderr}`);
    return JSON.parse(p.stdout) as { torch: string; results: { loss: number; grad: number[] }[] };
  };
  const ref = hasTorch ? run() : { torch: "", results: [] };

  it.each(cases.map((c, i) => [JSON.stringify(c), i] as const))("%s", (_, i) => {
    const { r, grad } = ours(cases[i]);
    const want = ref.results[i];
    const lossDiff = Math.abs(r.loss - want.loss);
    const gradDiff = maxAbsDiff(grad, want.grad);
    expect(lossDiff, `loss ${r.loss} vs torch ${want.loss}`).toBeLessThan(1e-5);
    expect(gradDiff, `worst gradient difference ${gradDiff}`).toBeLessThan(1e-5);
    expect(want.grad.some((g) => g !== 0)).toBe(true);
  });
});
