// Every iterative-coding prompt fits the base model: with inputs clipped to the role budgets and
// filled with code-like text (the tokenizer's worst case), prompt + maxNewTokens stays within
// models/base's 512 positions on every task of every split.
import { describe, expect, it } from "vitest";
import { BUDGET, clip, codeRole, planRole, reflectRole } from "../../examples/workflows/iterative-coding/roles.js";
import type { CodingState } from "../../examples/workflows/iterative-coding/state.js";
import { FEEDBACK_LINES } from "../../examples/workflows/iterative-coding/verifier.js";
import { BASE_MODEL_DIR, initialState, tasks } from "../../examples/workflows/iterative-coding/workflow.js";
import { readHfConfig } from "../../src/engine/io/hf-config.js";
import { encodeChat } from "../../src/engine/tokenizer/encode-chat.js";
import type { ChatMessage } from "../../src/engine/tokenizer/types.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { formatFeedback, type VerifyResult } from "../../src/envs/index.js";
import type { NodeContext } from "../../src/workflow/index.js";

/** Every test wrong, with a plausible wrong value of the same kind. */
function allWrong(task: (typeof tasks.train)[number]): string {
  const result: VerifyResult = {
    passRate: 0,
    passed: 0,
    total: task.tests.length,
    wallMs: 0,
    tests: task.tests.map((t, index) => {
      const expected = "expected" in t ? t.expected : null;
      const got = typeof expected === "string" ? [...expected].reverse().join("") : typeof expected === "number" ? expected + 17 : null;
      return {
        index,
        label: "call" in t ? t.call : `input #${index + 1}`,
        status: "wrong",
        expected: JSON.stringify(expected),
        got: JSON.stringify(got),
      };
    }),
  };
  return formatFeedback(result, FEEDBACK_LINES);
}

describe("iterative-coding prompts fit models/base", () => {
  it("prompt + maxNewTokens <= maxPositionEmbeddings for plan, code and reflect on every task", async () => {
    const tok = await loadTokenizer(BASE_MODEL_DIR);
    const config = await readHfConfig(BASE_MODEL_DIR);
    const ctx = {} as NodeContext;
    let worst = 0;
    for (const task of [...tasks.train, ...tasks.dev, ...tasks.test]) {
      const codeLike = `${task.reference} ${task.reference} ${task.reference}`;
      const s: CodingState = {
        ...initialState(task),
        reflection: clip(codeLike, BUDGET.reflection + 50),
        plan: clip(codeLike, BUDGET.plan + 50),
        code: clip(codeLike, BUDGET.code + 50),
        results: [{ turn: 1, passRate: 0, passed: 0, total: task.tests.length, feedback: allWrong(task) }],
      };
      for (const role of [planRole, codeRole, reflectRole]) {
        const messages = role.prompt(s, ctx);
        const need = encodeChat(tok, messages as ChatMessage[], { addGenerationPrompt: true }).length + role.maxNewTokens;
        worst = Math.max(worst, need);
        if (need > config.maxPositionEmbeddings) expect.fail(`${role.name} on ${task.id} needs ${need} positions`);
      }
    }
    expect(worst).toBeLessThanOrEqual(config.maxPositionEmbeddings);
  });
});
