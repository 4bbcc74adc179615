// Forward and sampler outputs live in pooled buffers that are not zeroed before use (takeUncleared):
// every kernel must write them in full. With every idle buffer filled with NaN first, a training
// forward + backward and a sampler run must give exactly the bits they give on fresh buffers; a
// kernel that reads an element it did not write turns them into NaN or changes them.
import { describe, expect, it } from "vitest";
import { Sampler } from "../../src/engine/generate/index.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { fillPooled } from "../../src/engine/model/scratch.js";
import type { Precision } from "../../src/native/binding.js";
import { native } from "../../src/native/binding.js";
import { type Case, cases } from "./decoder-cases.js";

const precisions: Precision[] = native().bf16().onednn ? ["fp32", "bf16"] : ["fp32"];

function model(c: Case, precision: Precision): Decoder {
  const m = new Decoder(c.config, undefined, { seed: 7, trainBase: c.trainBase });
  for (const [name, lora] of Object.entries(c.adapters ?? {})) m.addAdapter(name, lora);
  // LoRA B starts at zero; nonzero B makes the adapter rows differ from the base rows
  for (const a of m.adapters.values()) a.params.data.set(a.params.data.map((_, i) => Math.sin(i) * 0.05));
  if (c.valueHead) m.addValueHead(c.valueHead.hidden);
  m.precision = precision;
  return m;
}

function sequences(c: Case) {
  return c.sequences.map((s, i) => {
    const tokens = Array.from({ length: s.length }, (_, j) => (i * 13 + j * 7) % c.config.vocabSize);
    return { tokens, scoreMask: new Uint8Array(s.length).fill(1, 1), adapter: s.adapter ?? null };
  });
}

/** Log-probs, entropies, values and every gradient of one forward + backward, as bit arrays. */
function trainPass(m: Decoder, c: Case): Uint32Array[] {
  const f = m.forward(sequences(c), { grad: true, values: m.valueHead !== null, temperature: c.temperature ?? 1 });
  const M = f.logp.length;
  const ramp = (k: number) => Float32Array.from({ length: M }, (_, i) => (i % 5) * k - k);
  m.backward(f.tape!, { dlogp: ramp(0.1), dentropy: ramp(0.01), dvalues: f.values ? ramp(0.2) : undefined });
  const grads = [m.grads, ...[...m.adapters.values()].map((a) => a.grads), m.valueHead?.grads ?? null];
  const out = [f.logp, f.entropy, f.values ?? new Float32Array(), ...grads.filter((g) => g !== null).map((g) => g.data.slice())];
  m.zeroGrad();
  return out.map((a) => new Uint32Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength)));
}

async function generate(m: Decoder, c: Case): Promise<unknown> {
  const sampler = new Sampler(m, { seed: 3 });
  const adapters = [null, ...m.adapters.keys()];
  const runs = adapters.map((adapter, i) =>
    sampler.submit({ promptTokens: sequences(c)[i % c.sequences.length].tokens, adapter, maxNewTokens: 12, temperature: 0.8 }),
  );
  const results = await Promise.all(runs);
  sampler.close();
  return results.map((r) => [r.tokens, Array.from(r.logprobs)]);
}

describe("outputs in uncleared pooled buffers", () => {
  for (const precision of precisions)
    for (const c of cases) {
      it(`${precision}, ${c.name}: training pass and sampler give the same bits over NaN-filled buffers`, async () => {
        const m = model(c, precision);
        const fresh = trainPass(m, c);
        const freshTokens = await generate(m, c);
        fillPooled(Number.NaN);
        const poisoned = trainPass(m, c);
        expect(fresh[0].length).toBeGreaterThan(0);
        for (const [i, a] of poisoned.entries()) expect(a, `output ${i}`).toEqual(fresh[i]);
        fillPooled(Number.NaN);
        expect(await generate(m, c)).toEqual(freshTokens);
      });
    }
});
