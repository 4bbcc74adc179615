// Every MARFT math prompt fits the base model in the worst round: with two failed rounds whose plans
// and answers fill their budgets with arithmetic (digits tokenize at ~1 character per token, the
// worst case), prompt + maxNewTokens stays within
// models/base's 512 positions for the reasoner, the actor and the single-agent actor on every task.
import { describe, expect, it } from "vitest";
import { BASE_MODEL_DIR, tasks } from "../../examples/workflows/marft-math/config.js";
import { HISTORY_BUDGET } from "../../examples/workflows/marft-math/judge.js";
import { actorRole, PLAN_CHARS, reasonerRole, soloActorRole } from "../../examples/workflows/marft-math/roles.js";
import { initialState, type MathState, MAX_ROUNDS } from "../../examples/workflows/marft-math/state.js";
import { readHfConfig } from "../../src/engine/io/hf-config.js";
import { encodeChat } from "../../src/engine/tokenizer/encode-chat.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import type { ChatMessage } from "../../src/engine/tokenizer/types.js";
import type { NodeContext } from "../../src/workflow/index.js";

const fill = (n: number) => "17 * 23 = 391, 391 - 48 = 343; then 343 / 7 = 49. ".repeat(20).slice(0, n + 40);

describe("marft-math prompts fit models/base", () => {
  it("prompt + maxNewTokens <= maxPositionEmbeddings in the last round, on every task", async () => {
    const tok = await loadTokenizer(BASE_MODEL_DIR);
    const config = await readHfConfig(BASE_MODEL_DIR);
    const ctx = {} as NodeContext;
    let worst = 0;
    for (const task of [...tasks.train, ...tasks.dev, ...tasks.test]) {
      const s: MathState = {
        ...initialState(task),
        plan: fill(PLAN_CHARS),
        history: Array.from({ length: MAX_ROUNDS - 1 }, () => ({ plan: fill(HISTORY_BUDGET.plan), output: fill(HISTORY_BUDGET.output) })),
      };
      for (const role of [reasonerRole, actorRole, soloActorRole]) {
        const need = encodeChat(tok, role.prompt(s, ctx) as ChatMessage[], { addGenerationPrompt: true }).length + role.maxNewTokens;
        worst = Math.max(worst, need);
        if (need > config.maxPositionEmbeddings) expect.fail(`${role.name} on ${task.id} needs ${need} positions`);
      }
    }
    expect(worst).toBeLessThanOrEqual(config.maxPositionEmbeddings);
  });
});
