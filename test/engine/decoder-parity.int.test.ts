// The engine against an independent PyTorch (float64) implementation: per-token log-probs,
// entropies and values, every gradient (base, LoRA, value head), and the loss along 3 AdamW steps,
// for Llama, Qwen2 and Qwen3 shapes on a packed batch of uneven sequences.
import { describe, expect, it } from "vitest";
import { createAdamW } from "../../src/engine/optim/adamw.js";
import { maxDiff, runReference } from "../reference/reference.js";
import { build, cases, groups, loss, OPT } from "./decoder-cases.js";

describe("decoder matches PyTorch", () => {
  for (const c of cases) {
    describe(c.name, () => {
      const spec = { ...c, seed: 1234, optimizer: OPT, sequences: c.sequences.map((s) => ({ ...s, scoreFraction: 0.7 })) };
      const fx = runReference("decoder_ref.py", spec);
      const seqs = fx.manifest.sequences.map((s) => ({ tokens: s.tokens, scoreMask: s.mask, adapter: s.adapter }));

      it("per-token log-probs, entropies and values agree within 1e-4", () => {
        const model = build(c, fx);
        const out = model.forward(seqs, { values: !!c.valueHead, temperature: c.temperature });
        expect(maxDiff(out.logp, fx.get("out/logp")).abs).toBeLessThanOrEqual(1e-4);
        expect(maxDiff(out.entropy, fx.get("out/entropy")).abs).toBeLessThanOrEqual(1e-4);
        if (c.valueHead) expect(maxDiff(out.values!, fx.get("out/values")).abs).toBeLessThanOrEqual(1e-4);
      });

      it.each([
        ["kept logits", undefined],
        ["recomputed logits", 0],
      ])("every gradient agrees within 1e-4 of its scale (%s)", (_label, keep) => {
        const model = build(c, fx);
        const { out, grads } = loss(model, c, fx, seqs, keep);
        model.backward(out.tape!, grads);
        const worst: string[] = [];
        const check = (label: string, got: Float32Array, refName: string) => {
          const d = maxDiff(got, fx.get(refName));
          const rel = d.abs / Math.max(d.scale, 1e-6);
          if (!(rel <= 1e-4)) worst.push(`${label}: abs ${d.abs.toExponential(2)} scale ${d.scale.toExponential(2)}`);
        };
        let checked = 0;
        if (model.grads) {
          for (const s of model.grads.specs) {
            check(s.name, model.grads.get(s.name), `grad/param/${s.name}`);
            checked++;
          }
        } else {
          expect(fx.names("grad/param/")).toEqual([]);
        }
        for (const a of model.adapters.values()) {
          for (const s of a.grads.specs) {
            check(`${a.name}:${s.name}`, a.grads.get(s.name), `grad/adapter/${a.name}/${s.name}`);
            checked++;
          }
        }
        if (model.valueHead) {
          for (const s of model.valueHead.grads.specs) {
            check(s.name, model.valueHead.grads.get(s.name), `grad/value/${s.name}`);
            checked++;
          }
        }
        expect(checked).toBeGreaterThan(0);
        expect(worst).toEqual([]);
      });

      it("loss follows PyTorch along 3 AdamW steps with clipping", () => {
        const model = build(c, fx);
        const opt = createAdamW(groups(model), OPT);
        const losses: number[] = [];
        const norms: number[] = [];
        for (let s = 0; s < OPT.steps; s++) {
          model.zeroGrad();
          const { out, L, grads } = loss(model, c, fx, seqs);
          losses.push(L);
          model.backward(out.tape!, grads);
          norms.push(opt.step().gradNorm);
        }
        losses.push(loss(model, c, fx, seqs).L);
        const want = fx.manifest.losses;
        for (let i = 0; i < want.length; i++)
          expect(Math.abs(losses[i] - want[i])).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want[i])));
        for (let i = 0; i < norms.length; i++)
          expect(Math.abs(norms[i] - fx.manifest.gradNorms[i])).toBeLessThanOrEqual(1e-4 * Math.max(1, fx.manifest.gradNorms[i]));
        expect(losses[OPT.steps]).not.toBeCloseTo(losses[0], 3);
      });
    });
  }
});
