// What the engine alone takes for the workload's calls at one agent: prefill and decode-step times
// of the committed model as the cast declares it (precision, adapters), in a Sampler on this thread
// with as many kernel threads as one generation lane has. It is the reference a streamed call's
// time to first token is held to (prefill + two decode steps). No HTTP, no worker group.
import { Sampler } from "../../src/engine/generate/sampler.js";
import type { ChatMessage } from "../../src/engine/tokenizer/types.js";
import { defaultThreads, native } from "../../src/native/binding.js";
import type { Cast } from "../../src/runtime/cast.js";
import { defaultLanes, tokenizerSource } from "../../src/runtime/worker-group/lanes/lane-generator.js";
import { loadModel } from "../../src/runtime/worker-group/models.js";
import { median } from "../median.js";
import { ms } from "./figures.js";
import { againPrompt, firstPrompt, judgePrompt, MAX_TOKENS, tasks } from "./workload.js";

/**
 * Median prefill time per call and median decode-step time (ms) over `episodes` writer → judge →
 * writer chains, one call at a time, after one unmeasured chain.
 * @example const { prefill_ms, decode_step_ms } = await samplerReference(rt.cast, 16);
 */
export async function samplerReference(cast: Cast, episodes: number) {
  const spec = cast.models.get("base")!;
  const { decoder, tokenizer } = await loadModel(spec);
  for (const a of cast.adaptersOf("base")) decoder.addAdapter(a, spec.lora!);
  const sampler = new Sampler(decoder, { tokenizer });
  const prefill: number[] = [];
  const step: number[] = [];
  const call = async (role: string, messages: ChatMessage[]) => {
    const before = sampler.stats();
    const adapter = cast.roles.get(role)?.adapter ?? null;
    const r = await sampler.submit({ messages, adapter, maxNewTokens: MAX_TOKENS, temperature: 1 });
    const after = sampler.stats();
    prefill.push(after.prefillMs - before.prefillMs);
    const steps = after.decodeTokens - before.decodeTokens; // one sequence: one token a step
    if (steps > 0) step.push((after.decodeMs - before.decodeMs) / steps);
    return r.text;
  };
  // a lane's sampler runs on one kernel thread (lanes/lane-thread.ts); without lanes, on this thread's
  const oneThread = defaultLanes(decoder) > 1 && tokenizerSource(tokenizer) !== null;
  if (oneThread) native().setThreads(1);
  try {
    for (let i = -1; i < episodes; i++) {
      const { topic } = tasks.train[(i + tasks.train.length) % tasks.train.length];
      const draft = await call("writer", firstPrompt(topic));
      const verdict = await call("judge", judgePrompt(draft));
      await call("writer", againPrompt(topic, draft, verdict));
      if (i >= 0) continue;
      // the warm-up chain: pools, page faults
      prefill.length = 0;
      step.length = 0;
    }
  } finally {
    if (oneThread) native().setThreads(defaultThreads());
  }
  return { prefill_ms: ms(median(prefill)), decode_step_ms: ms(median(step)), precision: decoder.precision };
}
