// One generation lane: a worker thread with its own Sampler over the main thread's weights (shared
// memory, no copy) and one kernel thread, so lanes decode side by side on separate cores.
import { parentPort, workerData } from "node:worker_threads";
import { Sampler } from "../../../engine/generate/index.js";
import { Decoder } from "../../../engine/model/decoder.js";
import { loraParamSpecs, modelParamSpecs, ParamTable } from "../../../engine/params.js";
import { byteTokenizerFromJson } from "../../../engine/tokenizer/byte-tokenizer.js";
import { hfTokenizerFromFiles } from "../../../engine/tokenizer/hf-tokenizer.js";
import { MasoError } from "../../../errors.js";
import { native } from "../../../native/binding.js";
import { lowerThreadPriority } from "./lane-priority.js";
import type { FromLane, LaneCounters, LaneData, ToLane } from "./protocol.js";

const data = workerData as LaneData;
const port = parentPort!;
// one kernel thread per lane: the lanes are the parallelism (the setting is this thread's own)
native().setThreads(1);
lowerThreadPriority(data.nice);
const model = new Decoder(data.config, new ParamTable(modelParamSpecs(data.config), data.base), { trainBase: false });
for (const a of data.adapters) model.addAdapter(a.name, a.lora, new ParamTable(loraParamSpecs(data.config, a.lora), a.params));
const tokenizer = data.tokenizer.kind === "hf" ? hfTokenizerFromFiles(data.tokenizer.files) : byteTokenizerFromJson(data.tokenizer.json);
const sampler = new Sampler(model, { ...data.sampler, tokenizer });

const counters = (): LaneCounters => {
  const s = sampler.stats();
  return { steps: s.steps, decodeTokens: s.decodeTokens, busyMs: s.prefillMs + s.decodeMs };
};
const send = (m: FromLane) => port.postMessage(m);

port.on("message", (m: ToLane) => {
  if (m.kind === "weightsChanged") return sampler.weightsChanged();
  model.precision = m.precision;
  const onToken = m.stream ? (t: number) => send({ kind: "tokens", id: m.id, tokens: [t] }) : undefined;
  sampler.submit(m.request, onToken).then(
    (r) =>
      send({
        kind: "result",
        id: m.id,
        result: {
          tokens: r.tokens,
          logprobs: r.logprobs,
          text: r.text,
          finishReason: r.finishReason,
          ...(r.topLogprobs && { topLogprobs: r.topLogprobs }),
        },
        counters: counters(),
      }),
    (e: unknown) => {
      const error =
        e instanceof MasoError
          ? { code: e.code, message: e.what, hint: e.hint }
          : { code: null, message: e instanceof Error ? e.message : String(e), hint: "" };
      send({ kind: "failed", id: m.id, error, counters: counters() });
    },
  );
});
