// The decoder with `precision: "bf16"` (GEMM operands rounded to bf16, fp32 accumulation and
// outputs) on the fp32 parity cases (Llama full fine-tuning + value head, Qwen2 LoRA on a frozen
// base, Qwen3), forward (log-probs, entropies, values) and backward (every gradient), against two
// PyTorch references from one fixture: the float64 model and the same model on float32 copies
// under torch.autocast("cpu", dtype=torch.bfloat16).
//
// The engine rounds the operands of the weight GEMMs (projections, MLP, LM head) and keeps
// attention's per-head products in fp32; autocast rounds those too.
//
// Tolerances, with EPS = 2^-8 (the spacing of bf16 numbers at 1):
// - against float64: outputs within 8·EPS·max(1, |largest reference value|) (worst seen 3.3·EPS),
//   gradients within 32·EPS of each tensor's largest entry. Operand rounding errs by up to EPS/2
//   per GEMM input; it compounds through 2-3 layers, the softmax and the backward chain, and the
//   Qwen2 case (tied head, temperature 0.7, logits up to ~20) amplifies it most: its worst
//   gradient is ~26·EPS (autocast's ~73·EPS); the others stay under 8·EPS.
// - against autocast: autocast also rounds every GEMM's OUTPUT to bf16 (logits, activations), and
//   we keep outputs in fp32, so the two differ by more than either differs from float64. We check
//   that our error against float64 is at most 1.5× autocast's own (we round less, so are about as
//   accurate or better; 1.5 leaves room for the cases where the two are equal within noise), and
//   that we differ from autocast by at most twice its error against float64.
// - the bf16 path really ran: our error against float64 is >100× the fp32 engine's (~1e-6).
import { describe, expect, it } from "vitest";
import type { Decoder } from "../../src/engine/model/decoder.js";
import { native } from "../../src/native/binding.js";
import { type Fixture, maxDiff, runReference } from "../reference/reference.js";
import { build, type Case, cases, loss, OPT } from "./decoder-cases.js";

const EPS = 2 ** -8;
const onednn = native().bf16().onednn;

/** Every gradient maso computes, with its fixture name (without the bf16/ prefix). */
function gradients(model: Decoder): [string, Float32Array][] {
  const out: [string, Float32Array][] = [];
  if (model.grads) for (const s of model.grads.specs) out.push([`grad/param/${s.name}`, model.grads.get(s.name)]);
  for (const a of model.adapters.values())
    for (const s of a.grads.specs) out.push([`grad/adapter/${a.name}/${s.name}`, a.grads.get(s.name)]);
  if (model.valueHead) for (const s of model.valueHead.grads.specs) out.push([`grad/value/${s.name}`, model.valueHead.grads.get(s.name)]);
  return out;
}

const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** Worst error of `got` against float64, autocast's against float64, and `got` against autocast, all relative to `scale(ref)`. */
function errors(fx: Fixture, name: string, got: Float32Array, scale: (s: number) => number) {
  const ref = maxDiff(got, fx.get(name));
  const s = scale(ref.scale);
  return {
    ours: ref.abs / s,
    autocast: maxDiff(fx.get(`bf16/${name}`), fx.get(name)).abs / s,
    vsAutocast: maxDiff(got, fx.get(`bf16/${name}`)).abs / s,
  };
}

function expectBf16Accuracy(label: string, e: ReturnType<typeof errors>, bound: number, fp32: number) {
  const facts = `${label}: ours ${e.ours.toExponential(2)}, autocast ${e.autocast.toExponential(2)}, ours vs autocast ${e.vsAutocast.toExponential(2)}`;
  expect(e.ours, facts).toBeLessThanOrEqual(bound);
  expect(e.ours, facts).toBeLessThanOrEqual(1.5 * e.autocast);
  expect(e.vsAutocast, facts).toBeLessThanOrEqual(2 * e.autocast);
  expect(e.ours, facts).toBeGreaterThan(100 * fp32);
}

function setUp(c: Case) {
  const spec = { ...c, seed: 1234, optimizer: OPT, autocast: true, sequences: c.sequences.map((s) => ({ ...s, scoreFraction: 0.7 })) };
  const fx = runReference("decoder_ref.py", spec);
  const seqs = fx.manifest.sequences.map((s) => ({ tokens: s.tokens, scoreMask: s.mask, adapter: s.adapter }));
  return { fx, seqs };
}

describe.skipIf(!onednn)("bf16 decoder against PyTorch float64 and bf16 autocast", () => {
  for (const c of cases) {
    describe(c.name, () => {
      const { fx, seqs } = setUp(c);

      it("log-probs, entropies and values", () => {
        const bf = build(c, fx);
        bf.precision = "bf16";
        const opts = { values: !!c.valueHead, temperature: c.temperature };
        const out = bf.forward(seqs, opts);
        const ref32 = build(c, fx).forward(seqs, opts);
        expect(native().precision()).toBe("fp32"); // the fp32 model's forward switched back
        const outputs = [
          ["logp", out.logp, ref32.logp],
          ["entropy", out.entropy, ref32.entropy],
          ...(c.valueHead ? [["values", out.values!, ref32.values!] as const] : []),
        ] as const;
        for (const [k, got, fp32] of outputs) {
          const scale = (s: number) => Math.max(1, s);
          const fp32Err = maxDiff(fp32, fx.get(`out/${k}`)).abs / scale(maxDiff(fp32, fx.get(`out/${k}`)).scale);
          expectBf16Accuracy(k, errors(fx, `out/${k}`, got, scale), 8 * EPS, fp32Err);
        }
      });

      it("every gradient", () => {
        const bf = build(c, fx);
        bf.precision = "bf16";
        const run = loss(bf, c, fx, seqs);
        bf.backward(run.out.tape!, run.grads);
        const fp = build(c, fx);
        const run32 = loss(fp, c, fx, seqs);
        fp.backward(run32.out.tape!, run32.grads);
        const fp32Grads = new Map(gradients(fp));
        const worst = { ours: 0, autocast: 0, vsAutocast: 0 };
        let fp32Worst = 0;
        for (const [name, got] of gradients(bf)) {
          const e = errors(fx, name, got, (s) => Math.max(s, 1e-6));
          worst.ours = Math.max(worst.ours, e.ours);
          worst.autocast = Math.max(worst.autocast, e.autocast);
          worst.vsAutocast = Math.max(worst.vsAutocast, e.vsAutocast);
          const d = maxDiff(fp32Grads.get(name)!, fx.get(name));
          fp32Worst = Math.max(fp32Worst, d.abs / Math.max(d.scale, 1e-6));
        }
        expectBf16Accuracy("worst gradient", worst, 32 * EPS, fp32Worst);
      });

      it("the same gradient bits whether the LM head keeps its logits or recomputes them", () => {
        // kept logits take their gradient in place, as bf16 bits; recomputed ones go through a
        // scratch chunk (here one chunk of every row, so both sum in the same order)
        const kept = build(c, fx);
        kept.precision = "bf16";
        const a = loss(kept, c, fx, seqs);
        expect(a.out.tape!.logits).not.toBeNull();
        kept.backward(a.out.tape!, a.grads);
        const recomputed = build(c, fx);
        recomputed.precision = "bf16";
        const b = loss(recomputed, c, fx, seqs, 0);
        expect(b.out.tape!.logits).toBeNull();
        recomputed.backward(b.out.tape!, b.grads);
        const other = new Map(gradients(recomputed));
        for (const [name, got] of gradients(kept)) expect(bytes(got).equals(bytes(other.get(name)!)), name).toBe(true);
      });
    });
  }
});
