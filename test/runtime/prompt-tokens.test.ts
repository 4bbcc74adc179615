// maxPromptTokens counts with the serving model's own tokenizer: a history that fits by ~4 characters
// per token but not by the model's count is dropped, oldest first, and the record says so. In-process,
// with the repository's small HF model (its BPE tokenizer) and a model with the byte tokenizer.
import { describe, expect, it } from "vitest";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { sharedOutcome } from "../../src/rewards/index.js";
import { createRuntime, type ModelSpec, resolveModelSpec, shareAll } from "../../src/runtime/index.js";
import { tokenizerOnly } from "../../src/runtime/token-counters.js";
import { tinyConfig } from "./helpers.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { approxTokenCount, truncateMessages } from "../../src/workflow/truncate.js";
import type { ChatMessage } from "../../src/workflow/role.js";

interface Chat {
  history: string[];
  now: string;
}

// digits and punctuation: the BPE model spends about a token per character where chars/4 counts a quarter
const history = ["1,9;4.7|2:8", "3;0,6|5.1:9", "7|4;2,8.0:3"];
const messages = (s: Chat): ChatMessage[] => [
  { role: "system", content: "sys" },
  ...s.history.map((h) => ({ role: "user" as const, content: h })),
  { role: "user", content: s.now },
];

/** A one-role workflow whose prompt budget is `budget` tokens. */
function chatWorkflow(budget: number) {
  const chat = defineRole<Chat, string>({
    name: "chat",
    prompt: messages,
    parse: textParser(),
    fallback: () => "",
    maxNewTokens: 2,
    maxPromptTokens: budget,
  });
  return workflow<Chat>().role("c", chat).edge(START, "c").edge("c", END).compile();
}

/** The prompt record of one greedy episode on `model`. */
async function fitted(model: ModelSpec, budget: number) {
  const rt = await createRuntime<Chat, null>({
    workflow: chatWorkflow(budget),
    models: [model],
    cast: shareAll(model.name, ["chat"]),
    rewards: [sharedOutcome(() => 0)],
    advantage: { estimator: "grpo" },
  });
  const [t] = await rt.controller.evaluate([{ episode: { id: "e", state: { history, now: "NOW" } }, task: null }]);
  expect(t.status).toBe("done");
  return t.records[0];
}

describe("maxPromptTokens counts the serving model's tokens", () => {
  it("drops history the BPE tokenizer counts over budget though ~4 characters per token would keep it", async () => {
    const tok = await loadTokenizer("models/base");
    const real = (s: string) => tok.encode(s, { addSpecialTokens: false, parseSpecialTokens: false }).length;
    const all = messages({ history, now: "NOW" });
    // a budget between the two counts of the whole prompt
    const budget = truncateMessages(all, 1e6, approxTokenCount).tokens + 4;
    expect(truncateMessages(all, budget, approxTokenCount).dropped).toBe(0);
    const want = truncateMessages(all, budget, real);
    expect(want.dropped).toBeGreaterThan(0);
    const r = await fitted({ name: "bpe", source: { weights: "models/base" } }, budget);
    expect(r.promptTruncation).toEqual({ dropped: want.dropped, tokens: want.tokens, overflow: false });
    const sent = (r.prompt as ChatMessage[]).map((m) => m.content);
    expect(sent).toEqual(want.items.map((m) => m.content));
    expect(sent.at(-1)).toBe("NOW");
    expect(sent).not.toContain(history[0]); // the oldest goes first
  });

  it("counts bytes for a model with the byte tokenizer", async () => {
    // sys 3+4, NOW 3+4, each history item 11+4 bytes: two fit, the oldest goes (~4 characters per token: 31, all fit)
    const r = await fitted({ name: "bytes", source: { config: tinyConfig(), seed: 1 } }, 44);
    expect(r.promptTruncation).toEqual({ dropped: 1, tokens: 7 + 7 + 2 * 15, overflow: false });
  });

  it("reads only the tokenizer where the workers hold the weights (NATS), and names the files it lacks", async () => {
    const tok = await tokenizerOnly(resolveModelSpec({ name: "bpe", source: { weights: "models/base" } }));
    expect(tok.encode("1,9;4.7", { addSpecialTokens: false })).toEqual(
      (await loadTokenizer("models/base")).encode("1,9;4.7", { addSpecialTokens: false }),
    );
    const err = await tokenizerOnly(resolveModelSpec({ name: "far", source: { weights: "/nonexistent/model" } })).catch((e) => e);
    expect(err).toMatchObject({ code: "TOKENIZER_NOT_FOUND" });
    expect(err.hint).toContain("tokenizer.json");
  });
});
