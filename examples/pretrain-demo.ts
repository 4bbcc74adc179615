// `npm run demo:pretrain`: a fresh clone to real training in a minute on 2 CPU cores.
// Pretrains a small byte-level Llama-style decoder from scratch on maso's synthetic world
// (facts and questions about invented people, places and organisations), reports held-out
// loss before and after, and saves the model in HF format.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { presetConfig } from "maso";
import { makeWorldTasks } from "maso/envs";
import { Decoder, createByteTokenizer, describeNative, evalLoss, pretrain, saveHfModel, saveTokenizer, tokenStream } from "maso/engine";

const STEPS = Number(process.env.MASO_DEMO_STEPS ?? 150);
const seed = 7;

const tok = createByteTokenizer();
// the "small" preset: d=192, 4 layers, GQA 6/2 heads, tied embeddings, byte vocabulary
const config = presetConfig("small", tok.eosTokenIds);

console.log(describeNative());
const world = makeWorldTasks(seed);
const texts = world.pretrainText;
const heldOutTexts = texts.filter((_, i) => i % 20 === 0);
const trainTexts = texts.filter((_, i) => i % 20 !== 0);
const train = tokenStream(tok, trainTexts);
const heldOut = tokenStream(tok, heldOutTexts);
console.log(
  `data: ${trainTexts.length} train texts (${train.length} tokens), ${heldOutTexts.length} held-out texts (${heldOut.length} tokens)`,
);

const model = new Decoder(config, undefined, { seed });
const seqLen = 128;
const before = evalLoss(model, heldOut, seqLen);
console.log(
  `model: ${(model.params.data.length / 1e6).toFixed(2)}M parameters; held-out loss before training ${before.toFixed(3)} nats/token`,
);
const t0 = performance.now();
const history = pretrain(model, train, heldOut, {
  steps: STEPS,
  batchSize: 8,
  seqLen,
  seed,
  evalEvery: 50,
  schedule: { kind: "cosine", lr: 3e-3, warmupSteps: 10, totalSteps: STEPS, minLr: 3e-4 },
  onStep: (s) => {
    if (s.step % 10 === 0 || s.evalLoss !== undefined) {
      const eta = ((performance.now() - t0) / 1000 / s.step) * (STEPS - s.step);
      const ev = s.evalLoss !== undefined ? ` held-out ${s.evalLoss.toFixed(3)}` : "";
      console.log(
        `step ${String(s.step).padStart(4)}/${STEPS} loss ${s.loss.toFixed(3)}${ev} lr ${s.lr.toExponential(1)} |g| ${s.gradNorm.toFixed(2)} ${s.tokensPerSecond.toFixed(0)} tok/s eta ${eta.toFixed(0)}s`,
      );
    }
  },
});
const after = history[history.length - 1].evalLoss!;
const runDir = resolve("runs", `demo-${new Date().toISOString().replace(/[:.]/g, "-")}`);
mkdirSync(runDir, { recursive: true });
writeFileSync(join(runDir, "metrics.jsonl"), history.map((h) => JSON.stringify(h)).join("\n") + "\n");
await saveHfModel(join(runDir, "model"), config, model.params);
await saveTokenizer(join(runDir, "model"), tok);
console.log(`\nheld-out loss: ${before.toFixed(3)} -> ${after.toFixed(3)} nats/token in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
console.log(`metrics: ${join(runDir, "metrics.jsonl")}\nmodel (HF safetensors + tokenizer): ${join(runDir, "model")}`);
