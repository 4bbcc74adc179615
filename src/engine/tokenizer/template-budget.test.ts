// Chat templates rendered under a budget: the real templates (Qwen3's, models/base's) render exactly
// as @huggingface/jinja renders them, and hostile ones — nested loops, exponential macros, doubling
// strings and lists, huge ranges, recursion past the stack — stop with TOKENIZER_CHAT_TEMPLATE_BUDGET
// within the budget instead of running for minutes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Template } from "@huggingface/jinja";
import { describe, expect, it } from "vitest";
import { compileChatTemplate } from "./chat-template.js";
import { qwen3TokenizerDir } from "./hf-tokenizer.js";
import { BASE_RENDER_BUDGET, budgetFor } from "./template-budget.js";
import type { ChatMessage } from "./types.js";

const templateOf = (dir: string) => JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")).chat_template as string;
const TEMPLATES = {
  qwen3: templateOf(qwen3TokenizerDir()),
  base: templateOf(join(import.meta.dirname, "..", "..", "..", "models", "base")),
};
const SPECIAL = { eos_token: "<|im_end|>" };
const TOOLS = [{ type: "function", function: { name: "add", description: "adds", parameters: { type: "object", properties: {} } } }];
const CHATS: ChatMessage[][] = [
  [{ role: "user", content: "hi" }],
  [
    { role: "system", content: "be brief" },
    { role: "user", content: "2+2?" },
    { role: "assistant", content: "<think>\nadd\n</think>\n\n4" },
    { role: "user", content: "and 3+3?" },
  ],
  [
    { role: "user", content: "add 1 and 2" },
    { role: "assistant", content: "", tool_calls: [{ id: "c0", type: "function", function: { name: "add", arguments: { a: 1, b: 2 } } }] },
    { role: "tool", content: "3", tool_call_id: "c0" },
  ],
];

/** A budget small enough for tests to reach its time limit quickly. */
const FAST = { ...BASE_RENDER_BUDGET, ms: 300 };

describe("a budgeted render", () => {
  it("renders the real templates exactly as @huggingface/jinja does", () => {
    for (const [name, source] of Object.entries(TEMPLATES)) {
      const render = compileChatTemplate(source, SPECIAL);
      for (const messages of CHATS)
        for (const tools of [undefined, TOOLS]) {
          const want = new Template(source).render({ ...SPECIAL, messages, add_generation_prompt: true, tools });
          expect([name, render(messages, { addGenerationPrompt: true, tools })]).toEqual([name, want]);
        }
    }
  });

  const hostile: Record<string, [string, RegExp]> = {
    "nested loops (10^9 iterations)": [
      "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}x{% endfor %}{% endfor %}{% endfor %}",
      /more than 300 ms|evaluation steps/,
    ],
    "an exponential macro (2^40 calls)": [
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
      /evaluation steps|more than 300 ms/,
    ],
    "a doubling string": [
      "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
      /characters produced/,
    ],
    "a doubling list": [
      "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
      /a list of more than/,
    ],
    "a huge range": ["{% for i in range(10 ** 12) %}{% endfor %}", /range\(\) of more than/],
    "loops with empty bodies (10^12 iterations)": [
      "{% for a in range(1000000) %}{% for b in range(1000000) %}{% endfor %}{% endfor %}",
      /more than 300 ms|evaluation steps|range\(\) of more than/,
    ],
  };

  for (const [name, [source, what]] of Object.entries(hostile))
    it(`stops ${name} with TOKENIZER_CHAT_TEMPLATE_BUDGET within the budget`, () => {
      const render = compileChatTemplate(source, {}, { where: "models/evil", budget: FAST });
      const t = performance.now();
      let err: { code?: string; message?: string } = {};
      try {
        render([{ role: "user", content: "hi" }]);
      } catch (e) {
        err = e as typeof err;
      }
      expect(performance.now() - t).toBeLessThan(FAST.ms + 1500);
      expect(err.code).toBe("TOKENIZER_CHAT_TEMPLATE_BUDGET");
      expect(err.message).toContain("the chat template of models/evil went past its render budget");
      expect(err.message).toMatch(what);
    });

  it("stops recursion without end quickly (the library reports the overflowed stack as an unknown function)", () => {
    const render = compileChatTemplate("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", {}, { budget: FAST });
    const t = performance.now();
    expect(() => render([{ role: "user", content: "hi" }])).toThrow(
      expect.objectContaining({ code: expect.stringMatching(/^TOKENIZER_CHAT_TEMPLATE/) }),
    );
    expect(performance.now() - t).toBeLessThan(FAST.ms + 1500);
  });

  it("reports a budget error from the tool-support probe instead of 'no tools'", () => {
    const source = "{% if tools %}{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}{% endif %}x";
    const render = compileChatTemplate(source, {}, { budget: FAST });
    expect(() => render([{ role: "user", content: "hi" }], { tools: TOOLS })).toThrow(
      expect.objectContaining({ code: "TOKENIZER_CHAT_TEMPLATE_BUDGET" }),
    );
  });

  it("scales with the inputs: a long conversation has room for every message many times over", () => {
    const b = budgetFor(10_000_000, 5_000);
    expect(b.chars).toBe(640_000_000);
    expect(b.steps).toBe(BASE_RENDER_BUDGET.steps + 10_000_000);
    const long = Array.from(
      { length: 2_000 },
      (_, i): ChatMessage => ({ role: i % 2 ? "assistant" : "user", content: `m${i} ${"x".repeat(500)}` }),
    );
    const out = compileChatTemplate(TEMPLATES.qwen3, SPECIAL)(long, { addGenerationPrompt: true });
    expect(out.length).toBeGreaterThan(1_000_000);
  });
});
