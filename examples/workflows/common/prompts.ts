// The role prompts the base model was pretrained on, one builder per reference role. The reference
// workflows should build their prompts with these so the untrained model sees what it learned.
// Text only: no tokenizer, no randomness.
import type { ChatMessage } from "maso";
import type { MathStep } from "maso/envs";

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

/**
 * Text a response copies from its prompt (a name, a query, an evidence sentence) starts with a space.
 * The byte-level BPE attaches a word's leading space or punctuation to its first token, so " Koutros"
 * in a passage and ">Koutros" after a tag are different tokens: a name is copied token for token only
 * when the response spells it with the passages' leading space. Every parser trims it.
 */
export const copied = (text: string): string => ` ${text}`;

/** `answer` (and `plan`) target text: `<final_answer> X</final_answer>`. */
export const answerTarget = (answer: string): string => `<final_answer>${copied(answer)}</final_answer>`;

/** `search` target text: `<search> q</search>`. */
export const searchTarget = (query: string): string => `<search>${copied(query)}</search>`;

/** `decompose` target text: a JSON list whose items start with a space (trimmed by the parser). */
export const queriesTarget = (queries: readonly string[]): string => JSON.stringify(queries.map(copied));

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

/** `update` (iterative search): question + knowledge + the turn's evidence → one knowledge item to add. */
export function updatePrompt(question: string, knowledge: readonly string[], evidence: string): ChatMessage[] {
  const k = knowledge.length === 0 ? "- none" : knowledge.map((x) => `- ${x}`).join("\n");
  return user(`Question: ${question}\nKnowledge:\n${k}\nEvidence: ${evidence}\nWrite one new knowledge item.`);
}

/** `answer` over a knowledge state (iterative search): the items play the role of passages. */
export const knowledgeAnswerPrompt = (knowledge: readonly string[], question: string): ChatMessage[] =>
  answerPrompt(knowledge.length === 0 ? ["none"] : knowledge, question);

/** `plan` (iterative coding): problem (+ the last reflection) → short pseudocode. */
export function codePlanPrompt(problem: string, reflection = ""): ChatMessage[] {
  const r = reflection === "" ? "" : `\nReflection: ${reflection}`;
  return user(`Write a short plan in pseudocode.\nProblem: ${problem}${r}`);
}

/** `code` (iterative coding): problem + plan → one JavaScript function in a ```js block. */
export function codePrompt(problem: string, plan: string): ChatMessage[] {
  return user(`Write the JavaScript function in a \`\`\`js block.\nProblem: ${problem}\nPlan: ${plan}`);
}

/** `code` target text. */
export const codeTarget = (source: string): string => `\`\`\`js\n${source}\n\`\`\``;

/** `reflect` (iterative coding): problem + code + the verifier's failures → what to change. */
export function reflectPrompt(problem: string, code: string, failures: string): ChatMessage[] {
  return user(`The code fails some tests. Say what to change.\nProblem: ${problem}\nCode:\n${code}\nFailures:\n${failures}`);
}

/** `reasoner` (dual-agent math): problem (+ earlier rounds) → the steps, without computing. */
export function reasonerPrompt(problem: string, history = ""): ChatMessage[] {
  const h = history === "" ? "" : `\n${history}`;
  return user(`Plan the steps to solve the problem. Do not compute.\nProblem: ${problem}${h}`);
}

/** `actor` (dual-agent math): problem + the reasoner's plan (+ earlier rounds) → `\boxed{answer}`. */
export function actorPrompt(problem: string, plan: string, history = ""): ChatMessage[] {
  const h = history === "" ? "" : `\n${history}`;
  return user(`Solve the problem and put the answer in \\boxed{}.\nProblem: ${problem}\nPlan: ${plan}${h}`);
}

/** The judge line appended after a wrong answer (dual-agent math). */
export const JUDGE_INCORRECT = "The answer is incorrect.";

/** One failed round as the dual-agent prompts' history shows it: the plan, the answer, the judge line. */
export const failedRound = (plan: string, answer: string): string => `Plan: ${plan}\nAnswer: ${answer}\n${JUDGE_INCORRECT}`;

/** Keeps the first `max` characters, marking a cut with "…" (how the math prompts shorten history). */
export const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * The newest of `items` whose renderings (one line each) fit `total` characters, oldest first: how
 * the math prompts keep history (the oldest round goes first, never the newest).
 */
export function newestThatFit<T>(items: readonly T[], render: (item: T) => string, total: number): T[] {
  const kept: T[] = [];
  let used = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    used += render(items[i]).length + 1;
    if (used > total) break;
    kept.unshift(items[i]);
  }
  return kept;
}

/** The letter a math plan names step `i`'s result by (A, B, C, …). */
const stepName = (i: number): string => String.fromCharCode(65 + i);

/**
 * `reasoner` target for the math-adapted model: each operation with the problem's numbers and the
 * earlier results by name, nothing computed.
 * @example mathPlanTarget(steps) // "A = 4 * 6. B = 12 + A."
 */
export function mathPlanTarget(steps: readonly MathStep[]): string {
  const operand = (v: number, from?: number) => (from === undefined ? String(v) : stepName(from));
  return steps.map((s, i) => `${stepName(i)} = ${operand(s.a, s.aStep)} ${s.op} ${operand(s.b, s.bStep)}.`).join(" ");
}

/**
 * How the actor writes one operation. `plain`: `12 + 24 = 36.` `lsd`: the result's digits first,
 * least-significant first, in brackets — `12 + 24 = (63) 36.` — the order carries and borrows
 * propagate in, so each digit follows from the operands' digits at that place and the one before,
 * which a small model learns and a most-significant-first result is not (docs/base-model.md).
 * A difference keeps the minuend's width (`105 - 98 = (700) 7.`), so no digit needs lookahead;
 * a quotient stays plain (long division runs the other way).
 * `columns`: a sum or difference is worked column by column from the units, each column restating
 * its two digits and the carry or borrow before its own sum — `28 + 56 = (8+6=14 2+5+1=8) 84.`,
 * `92 - 47 = (12-7=5 9-4-1=4) 45.` — so every digit written is a single-digit fact over digits
 * just copied; products are written as in `lsd`, quotients plain.
 */
export type WorkedFormat = "plain" | "lsd" | "columns";

/** The result's digits least-significant first, padded with zeros to `width`; null where `lsd` writes none. */
export function lsdDigits(op: MathStep["op"], a: number, result: number): string | null {
  if (op === "/" || !Number.isInteger(result) || result < 0) return null;
  const width = op === "-" ? String(a).length : 0;
  return String(result).padStart(width, "0").split("").reverse().join("");
}

/** Digit `i` of `n` counted from the units (0 past its last digit). */
const digitAt = (n: number, i: number): number => Math.floor(n / 10 ** i) % 10;

/**
 * The `columns` working of `a + b` or `a - b` (a ≥ b ≥ 0, integers), units column first; null for
 * anything else. A difference runs over the minuend's width, a sum over the longer operand's.
 * @example columnWorking(92, "-", 47) // "12-7=5 9-4-1=4"
 */
export function columnWorking(a: number, op: MathStep["op"], b: number): string | null {
  const whole = Number.isInteger(a) && Number.isInteger(b) && b >= 0;
  if (!whole || (op !== "+" && op !== "-") || (op === "-" && a < b)) return null;
  const width = op === "-" ? String(a).length : Math.max(String(a).length, String(b).length);
  const columns: string[] = [];
  let carry = 0;
  for (let i = 0; i < width; i++) {
    const [x, y] = [digitAt(a, i), digitAt(b, i)];
    if (op === "+") {
      columns.push(`${x}+${y}${carry ? "+1" : ""}=${x + y + carry}`);
      carry = x + y + carry >= 10 ? 1 : 0;
    } else {
      const borrow = x - y - carry < 0 ? 1 : 0;
      columns.push(`${borrow ? "1" : ""}${x}-${y}${carry ? "-1" : ""}=${x + 10 * borrow - y - carry}`);
      carry = borrow;
    }
  }
  return columns.join(" ");
}

/**
 * One computed operation as the actor writes it, what follows `a op b =`.
 * @example workedResult({ a: 12, op: "+", b: 24, result: 36 }, "lsd") // " (63) 36."
 */
export function workedResult(s: Pick<MathStep, "a" | "op" | "b" | "result">, format: WorkedFormat): string {
  const columns = format === "columns" ? columnWorking(s.a, s.op, s.b) : null;
  const digits = format !== "plain" && columns === null ? lsdDigits(s.op, s.a, s.result) : null;
  const working = columns ?? digits;
  return working === null ? ` ${s.result}.` : ` (${working}) ${s.result}.`;
}

/**
 * `actor` target for the math-adapted model: every operation written out and computed, then the answer.
 * @example workedTarget(steps, "plain") // "4 * 6 = 24. 12 + 24 = 36. The answer is \boxed{36}."
 * @example workedTarget(steps) // "4 * 6 = (42) 24. 12 + 24 = (63) 36. The answer is \boxed{36}."
 */
export function workedTarget(steps: readonly MathStep[], format: WorkedFormat = "lsd"): string {
  const last = steps[steps.length - 1];
  const ops = steps.map((s) => `${s.a} ${s.op} ${s.b} =${workedResult(s, format)}`);
  return `${ops.join(" ")} The answer is \\boxed{${last.result}}.`;
}

/**
 * `judge` (a frozen QA judge model): question, gold answers and a candidate answer (fenced by the
 * judge rule) → `<score>x</score>`, x the candidate's token F1 against the gold, to one decimal.
 * @example judgePrompt("Where was Tharvel Dumosk born?", ["Kelvo"], "Kelvo")
 */
export function judgePrompt(question: string, gold: readonly string[], candidate: string): ChatMessage[] {
  return user(
    `Score the candidate answer against the gold answer with <score>x</score>.\nQuestion: ${question}\nGold answer: ${gold.join(" | ")}\nCandidate answer:${copied(candidate)}`,
  );
}

/** `judge` target text: `<score>x</score>`. */
export const judgeTarget = (score: number): string => `<score>${score.toFixed(1)}</score>`;
