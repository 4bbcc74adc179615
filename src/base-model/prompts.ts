// The role prompts the base model was pretrained on, one builder per reference role. The reference
// workflows should build their prompts with these so the untrained model sees what it learned.
// Text only: no tokenizer, no randomness.
import type { ChatMessage } from "../engine/tokenizer/types.js";

/** Numbered passages, one per line ("[1] …"). */
export function formatPassages(passages: readonly string[]): string {
  return passages.map((p, i) => `[${i + 1}] ${p}`).join("\n");
}

const user = (content: string): ChatMessage[] => [{ role: "user", content }];

/**
 * `answer`: passages + question → `<final_answer>X</final_answer>`.
 * @example answerPrompt(["Tharvel Dumosk was born in Kelvo."], "Where was Tharvel Dumosk born?")
 */
export function answerPrompt(passages: readonly string[], question: string): ChatMessage[] {
  return user(`Answer with <final_answer>...</final_answer>.\nPassages:\n${formatPassages(passages)}\nQuestion: ${question}`);
}

/** `answer` target text. */
export const answerTarget = (answer: string): string => `<final_answer>${answer}</final_answer>`;

/** `decompose`: question → JSON list of 1–3 search queries. */
export function decomposePrompt(question: string): ChatMessage[] {
  return user(`Write 1-3 search queries as a JSON list.\nQuestion: ${question}`);
}

/** `extract` (Retrieve-Extract-Answer): one sub-query + its passages → short evidence text. */
export function extractPrompt(query: string, passages: readonly string[]): ChatMessage[] {
  return user(`Extract the evidence for the query, or say no useful information.\nQuery: ${query}\nPassages:\n${formatPassages(passages)}`);
}

/** `summarize` (iterative search): the turn's query + passages → short evidence or "no useful information". */
export function summarizePrompt(query: string, passages: readonly string[]): ChatMessage[] {
  return user(
    `Summarize the evidence for the query, or say no useful information.\nQuery: ${query}\nPassages:\n${formatPassages(passages)}`,
  );
}

/** The text a summarizer or extractor writes when the passages do not help. */
export const NO_USEFUL_INFORMATION = "no useful information";

/** `search` (iterative search): question + knowledge items → `<search>q</search>` or `<end>`. */
export function searchPrompt(question: string, knowledge: readonly string[]): ChatMessage[] {
  const k = knowledge.length === 0 ? "- none" : knowledge.map((x) => `- ${x}`).join("\n");
  return user(
    `Question: ${question}\nKnowledge:\n${k}\nReply <search>query</search> to search, or <end> if the knowledge answers the question.`,
  );
}

/** `plan` (iterative search): question → a first answer from memory as `<final_answer>X</final_answer>`. */
export function planPrompt(question: string): ChatMessage[] {
  return user(`Answer from memory with <final_answer>...</final_answer>.\nQuestion: ${question}`);
}

/** `actor` (dual-agent math): problem → computation ending in `\boxed{answer}`. */
export function mathPrompt(problem: string): ChatMessage[] {
  return user(`Solve the problem and put the answer in \\boxed{}.\nProblem: ${problem}`);
}
