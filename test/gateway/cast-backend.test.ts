// `maso serve`'s backend generates with `keep: false`: the worker group answers exactly as a kept
// call of the same request would, yet caches no sample, so nothing is discarded afterwards.
import { describe, expect, it } from "vitest";
import { castBackend } from "../../src/gateway/cast-backend.js";
import type { GatewayCall } from "../../src/gateway/types.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { createRuntime, rolesOf, shareAll } from "../../src/runtime/index.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { ask, tinyConfig } from "../runtime/helpers.js";
import { recordingTransport } from "../runtime/recording-transport.js";

const wf = workflow<{ q: string }>({ name: "one" })
  .role("say", defineRole<{ q: string }, string>({ name: "say", prompt: (s) => ask(s.q), parse: textParser(), fallback: () => "" }))
  .edge(START, "say")
  .edge("say", END)
  .compile();

const call = (content: string, visit: number): GatewayCall => ({
  episodeId: "serve",
  api: "chat",
  role: "say",
  messages: [{ role: "user", content }],
  stop: [],
  logprobs: false,
  maxTokens: 6,
  seed: visit,
});

describe("castBackend (maso serve)", () => {
  it("answers as a kept call would and leaves the worker group's sample store untouched", async () => {
    const rt = await createRuntime({
      workflow: wf,
      models: [{ name: "m", source: { config: tinyConfig(), seed: 5 } }],
      cast: shareAll("m", rolesOf(wf)),
      rewards: [sharedOutcome(() => 1)],
      advantage: { estimator: "grpo" },
      trainer: { lr: 1e-3 },
    });
    // the backend's transport, recording every operation and the generate requests it sends
    const { transport, ops, sent } = recordingTransport(rt.transport);
    const backend = castBackend(rt.cast, transport, ["say"], { apiKey: "k", maxNewTokens: 6 });
    const served = [await backend.complete(call("hello", 0)), await backend.complete(call("again", 1))];
    expect(ops).toEqual(["generate", "generate"]);
    const state = await rt.transport.call("m", "state", {});
    expect(state.calls.say).toEqual({ "-": 2 });
    expect([state.cachedSamples, state.samplesKept, state.samplesDropped]).toEqual([0, 0, 0]);

    // the same requests kept: the same tokens, and now a sample each
    for (const [i, req] of sent.entries()) {
      expect(req.keep).toBe(false);
      const { keep: _, ...kept } = req;
      const res = await rt.transport.call("m", "generate", kept);
      expect(res.sampleHandle).not.toBeNull();
      expect([res.text, res.promptTokens, res.outputTokens]).toEqual([served[i].text, served[i].promptTokens, served[i].outputTokens]);
    }
    expect((await rt.transport.call("m", "state", {})).samplesKept).toBe(2);
  });
});
