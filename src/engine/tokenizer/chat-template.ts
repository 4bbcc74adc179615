// Renders an HF chat template (Jinja) with the variables transformers passes to it, every render
// under a budget (template-budget.ts). It only turns messages into prompt text; it never tokenizes
// and never evaluates anything but the template.

import { Template } from "@huggingface/jinja";
import { MasoError } from "../../errors.js";
import { BASE_RENDER_BUDGET, type RenderBudget, TemplateBudgetExceeded, budgetFor, renderBounded } from "./template-budget.js";
import { templateVariablesProblem } from "./template-variables.js";
import type { ChatMessage, ChatTemplateOptions } from "./types.js";

/** Renders messages to a prompt string. */
export type ChatTemplateRenderer = (messages: ChatMessage[], opts?: ChatTemplateOptions) => string;

/**
 * Parses a Jinja chat template once and returns its renderer.
 *
 * The template sees what `transformers` passes: `messages`, `add_generation_prompt`, `tools`,
 * the special-token strings (`bos_token`, `eos_token`, …), `enable_thinking` only when set,
 * the caller's extra `variables`, and `raise_exception(msg)` (built into @huggingface/jinja).
 * Reserved names among the extra variables throw TOKENIZER_CHAT_TEMPLATE. Any failure, a template's own
 * `raise_exception` included, throws MasoError `TOKENIZER_CHAT_TEMPLATE` carrying the template's message;
 * a render past its budget (steps, time, characters, list length; see template-budget.ts) throws
 * `TOKENIZER_CHAT_TEMPLATE_BUDGET`. `where` names the template's source in messages.
 *
 * @example
 * const render = compileChatTemplate("{% for m in messages %}{{ m.content }}{% endfor %}", {});
 * render([{ role: "user", content: "hi" }]); // "hi"
 */
export function compileChatTemplate(
  source: string,
  specialTokens: Readonly<Record<string, string>>,
  opts: { where?: string; budget?: Readonly<RenderBudget> } = {},
): ChatTemplateRenderer {
  const where = opts.where ?? "the model directory";
  let template: Template;
  try {
    template = new Template(source);
  } catch (err) {
    throw new MasoError(
      "TOKENIZER_CHAT_TEMPLATE",
      `chat template of ${where} does not parse: ${(err as Error).message}`,
      "check chat_template in tokenizer_config.json (or chat_template.jinja) of the model directory",
    );
  }
  const render = (vars: Record<string, unknown>): string => {
    const [chars, items] = inputSize(vars);
    try {
      return renderBounded(template, vars, budgetFor(chars, items, opts.budget ?? BASE_RENDER_BUDGET));
    } catch (err) {
      // a RangeError is recursion past the stack or a string past JavaScript's limit: a budget too
      if (err instanceof TemplateBudgetExceeded || err instanceof RangeError)
        throw new MasoError(
          "TOKENIZER_CHAT_TEMPLATE_BUDGET",
          `the chat template of ${where} went past its render budget (${err instanceof TemplateBudgetExceeded ? err.what : err.message}) on ${items} messages and tools`,
          "a chat template renders in well under a millisecond; this one loops or recurses without bound. Use the model's original chat template",
        );
      throw err;
    }
  };
  const can = toolSupport(render, specialTokens);
  return (messages, opts = {}) => {
    const wantsTools = opts.tools !== undefined && opts.tools.length > 0;
    const hasCalls = messages.some((m) => (m.tool_calls?.length ?? 0) > 0);
    if ((wantsTools && !can().tools) || (hasCalls && !can().calls))
      throw new MasoError(
        "TOKENIZER_NO_TOOLS",
        `the model's chat template does not render ${wantsTools && !can().tools ? "tools" : "assistant tool calls"}: the model would never see them`,
        "use a model whose chat template has a tool section (the Qwen2.5/Qwen3 templates, or the committed models/base*), or run tools as workflow nodes",
      );
    if (opts.variables !== undefined) {
      const problem = templateVariablesProblem(opts.variables);
      if (problem)
        throw new MasoError("TOKENIZER_CHAT_TEMPLATE", `chat template variables: ${problem}`, "fix the role's chatTemplate option");
    }
    const vars: Record<string, unknown> = {
      ...opts.variables,
      ...specialTokens,
      messages: messages.map((m) => ({ ...m })),
      add_generation_prompt: opts.addGenerationPrompt ?? false,
      tools: opts.tools,
    };
    if (opts.enableThinking !== undefined) vars.enable_thinking = opts.enableThinking;
    try {
      return render(vars);
    } catch (err) {
      if (err instanceof MasoError) throw err;
      throw new MasoError(
        "TOKENIZER_CHAT_TEMPLATE",
        `chat template failed to render: ${(err as Error).message}`,
        "the template rejected the messages; check their roles and order against the model's chat format",
      );
    }
  };
}

/** Characters and items (messages, tools) a render's inputs hold, to scale its budget. */
function inputSize(vars: Record<string, unknown>): [chars: number, items: number] {
  const messages = Array.isArray(vars.messages) ? (vars.messages as ChatMessage[]) : [];
  const tools = Array.isArray(vars.tools) ? vars.tools : [];
  let chars = 0;
  for (const m of messages) chars += typeof m.content === "string" ? m.content.length : JSON.stringify(m).length;
  if (tools.length > 0) chars += JSON.stringify(tools).length;
  return [chars, messages.length + tools.length];
}

const PROBE_TOOL = "maso_probe_tool";
const PROBE_CALL = "maso_probe_call";

/**
 * Whether a template shows `tools` and assistant `tool_calls` at all (a template without a tool
 * section renders them as nothing, and the model would be trained on prompts the client never
 * meant). Probed once, on first use, with names that cannot appear otherwise.
 */
function toolSupport(render: (vars: Record<string, unknown>) => string, specialTokens: Readonly<Record<string, string>>) {
  let known: { tools: boolean; calls: boolean } | undefined;
  const shows = (vars: Record<string, unknown>, name: string): boolean => {
    try {
      return render({ ...specialTokens, add_generation_prompt: false, ...vars }).includes(name);
    } catch (err) {
      if (err instanceof MasoError) throw err; // past its budget: not "no tools", a template to refuse
      return false;
    }
  };
  return () => {
    known ??= {
      tools: shows(
        {
          messages: [{ role: "user", content: "x" }],
          tools: [{ type: "function", function: { name: PROBE_TOOL, parameters: { type: "object", properties: {} } } }],
        },
        PROBE_TOOL,
      ),
      calls: shows(
        {
          messages: [
            { role: "user", content: "x" },
            { role: "assistant", content: "", tool_calls: [{ id: "c0", type: "function", function: { name: PROBE_CALL, arguments: {} } }] },
          ],
        },
        PROBE_CALL,
      ),
    };
    return known;
  };
}
