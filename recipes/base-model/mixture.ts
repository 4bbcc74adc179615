// The base model's pretraining mixture, generated from a seed with train-split material only: the
// world's pretraining text, role-format instruction examples and a copying curriculum over freshly
// invented names. Every fresh name avoids all dev/test entity words; the leak test checks the result.
import type { ChatMessage } from "maso";
import {
  type SyntheticMathTask as MathTask,
  formatFeedback,
  type SyntheticCodeTask,
  createNameSource,
  wordSet,
  templateWords,
  type WorldTasks,
  makeWorldTasks,
  createKeyedRng,
  type KeyedRng,
} from "maso/envs";

import { freshWorld } from "./fresh-world.js";
import {
  actorPrompt,
  answerPrompt,
  answerTarget,
  copied,
  failedRound,
  JUDGE_INCORRECT,
  queriesTarget,
  searchTarget,
  codePlanPrompt,
  codePrompt,
  codeTarget,
  reasonerPrompt,
  reflectPrompt,
  decomposePrompt,
  extractPrompt,
  mathPrompt,
  NO_USEFUL_INFORMATION,
  planPrompt,
  updatePrompt,
  searchPrompt,
  summarizePrompt,
} from "../../examples/workflows/common/prompts.js";
import { firstCodeTasks, referenceMathTasks } from "../../examples/workflows/common/reference-tasks.js";
import { supportingPassages } from "./world-passages.js";
import { type ChainQuestion, type WorldIndex, chainQuestions, factPassage, factSentence } from "./world-qa.js";

/** Kinds of examples in the mixture. */
export const MIXTURE_KINDS = [
  "world-text",
  "copy",
  "copy-text",
  "answer-fresh",
  "answer-train",
  "decompose",
  "extract",
  "summarize",
  "search",
  "update",
  "plan",
  "math",
  "reasoner",
  "code",
] as const;
export type MixtureKind = (typeof MIXTURE_KINDS)[number];

/** One example: plain text (every token trained) or a chat prompt plus the response to learn. */
export type MixtureExample = { kind: MixtureKind; text: string } | { kind: MixtureKind; messages: ChatMessage[]; response: string };

/** Examples per kind (world-text is always all of the world's pretraining text). */
export type MixtureCounts = Record<Exclude<MixtureKind, "world-text">, number>;

export const DEFAULT_MIXTURE_COUNTS: MixtureCounts = {
  copy: 6000,
  "copy-text": 3000,
  "answer-fresh": 12000,
  "answer-train": 2000,
  decompose: 1500,
  extract: 800,
  summarize: 800,
  search: 1500,
  update: 800,
  plan: 600,
  math: 1200,
  reasoner: 600,
  code: 1500,
};

/** The mixture and what it was made from. */
export interface Mixture {
  examples: MixtureExample[];
  counts: Record<MixtureKind, number>;
  /** The world whose train split it uses (same seed as the evaluation). */
  tasks: WorldTasks;
}

const REL_QUERY: Record<string, string> = {
  born_in: "birthplace",
  works_for: "employer",
  city_in: "country",
  based_in: "headquarters",
  founded_by: "founder",
  spouse: "spouse",
};

/** Sub-queries of a chain question: the start entity plus the relations so far ("X founder birthplace"). */
export function subQueries(q: ChainQuestion): string[] {
  return q.steps.map((_, i) => [q.chain[0], ...q.steps.slice(0, i + 1).map((s) => REL_QUERY[s.fact.relation])].join(" "));
}

/** The query for step `i` once the entity it starts from is known. */
export const stepQuery = (q: ChainQuestion, i: number) => `${q.steps[i].subject.name} ${REL_QUERY[q.steps[i].fact.relation]}`;

function distractors(w: WorldIndex, rng: KeyedRng, n: number): string[] {
  const ids = [...w.factsOf.keys()];
  return Array.from({ length: n }, () => {
    const s = rng.pick(ids);
    return factPassage(w, rng.pick(w.factsOf.get(s)!), s, rng);
  });
}

function answerFresh(w: WorldIndex, q: ChainQuestion, rng: KeyedRng): MixtureExample {
  const support = [...new Set(q.steps.map((s) => factPassage(w, s.fact, s.subject.id, rng)))];
  const passages = rng.shuffle([...support, ...distractors(w, rng, rng.int(0, 2))]);
  return { kind: "answer-fresh", messages: answerPrompt(passages, q.question), response: answerTarget(q.answer) };
}

function copyExample(w: WorldIndex, rng: KeyedRng, names: () => string): MixtureExample {
  if (rng.next() < 0.3) {
    const name = names();
    return { kind: "copy", messages: answerPrompt([`The name is ${name}.`], "What is the name?"), response: answerTarget(name) };
  }
  const ones = chainQuestions(w).filter((q) => q.hops === 1);
  const q = rng.pick(ones);
  const s = q.steps[0];
  return {
    kind: "copy",
    messages: answerPrompt([factPassage(w, s.fact, s.subject.id, rng)], q.question),
    response: answerTarget(q.answer),
  };
}

/**
 * Plain text over a fresh world: several facts, then question/answer lines about them. Every token is
 * trained, so each answer name (and each name repeated across facts) is a dense copying target.
 */
function copyText(w: WorldIndex, rng: KeyedRng): MixtureExample {
  const picked = rng.shuffle(chainQuestions(w).filter((q) => q.hops === 1)).slice(0, 6);
  const facts = rng.shuffle([...new Set(picked.map((q) => factSentence(w, q.steps[0].fact, q.steps[0].subject.id, rng)))]);
  const lines = rng.shuffle(picked).map((q) => `Question: ${q.question} Answer: ${q.answer}.`);
  return { kind: "copy-text", text: `${facts.join(" ")}\n${lines.join("\n")}` };
}

function evidenceExample(kind: "extract" | "summarize", w: WorldIndex, q: ChainQuestion, rng: KeyedRng): MixtureExample {
  const i = rng.int(0, q.steps.length - 1);
  const s = q.steps[i];
  const query = stepQuery(q, i);
  // "no useful information" is one fixed reply: at a quarter of the examples it became the greedy
  // mode even when a passage stated the fact (docs/base-model.md), so it is kept rare
  const useful = rng.next() < 0.9;
  const sentence = factSentence(w, s.fact, s.subject.id, rng);
  const passages = rng.shuffle([...(useful ? [sentence] : []), ...distractors(w, rng, rng.int(useful ? 0 : 1, 2))]);
  const messages = kind === "extract" ? extractPrompt(query, passages) : summarizePrompt(query, passages);
  // a distractor may state the same fact by chance; then it is useful after all
  const found = passages.find((p) => p.includes(s.object.name) && p.includes(s.subject.name));
  return { kind, messages, response: copied(useful ? sentence : (found ?? NO_USEFUL_INFORMATION)) };
}

/** The facts of the first `known` steps of `q`, one sentence each: an iterative search's knowledge so far. */
const knownFacts = (w: WorldIndex, q: ChainQuestion, known: number, rng: KeyedRng) =>
  q.steps.slice(0, known).map((s) => factSentence(w, s.fact, s.subject.id, rng));

function searchExample(w: WorldIndex, q: ChainQuestion, rng: KeyedRng): MixtureExample {
  const known = rng.int(0, q.steps.length);
  const knowledge = knownFacts(w, q, known, rng);
  const response = known === q.steps.length ? "<end>" : searchTarget(stepQuery(q, known));
  return { kind: "search", messages: searchPrompt(q.question, knowledge), response };
}

/** `update` (iterative search): the new knowledge item is the turn's evidence sentence restated. */
function updateExample(w: WorldIndex, q: ChainQuestion, rng: KeyedRng): MixtureExample {
  const known = rng.int(0, q.steps.length - 1);
  const knowledge = knownFacts(w, q, known, rng);
  const next = q.steps[known];
  const evidence = factSentence(w, next.fact, next.subject.id, rng);
  return { kind: "update", messages: updatePrompt(q.question, knowledge, evidence), response: copied(evidence) };
}

/** The reasoner's plan for an arithmetic problem: the shape of the computation, no numbers. */
const reasonerPlan = (ops: number) =>
  `Take the quantities from the problem and combine them in ${["one step", "two steps", "three steps", "four steps"][Math.min(ops, 4) - 1] ?? "several steps"}.`;

const boxed = (answer: string | number) => `The answer is \\boxed{${answer}}.`;

/** 1–2 wrong rounds as the dual-agent workflow's history shows them (its later rounds' prompts). */
function failedRounds(m: MathTask, rng: KeyedRng): string {
  const wrong = () => boxed(Number(m.answer) + rng.pick([-1, 1]) * rng.int(1, 9));
  return Array.from({ length: rng.int(1, 2) }, () => failedRound(reasonerPlan(m.ops), wrong())).join("\n");
}

/**
 * The actor's answer format in every prompt shape the math workflows use: alone, after the
 * reasoner's plan, after failed rounds (dual agent), and after failed turns (single agent).
 */
function mathExample(m: MathTask, i: number, rng: KeyedRng): MixtureExample {
  const response = boxed(m.answer);
  if (i % 4 === 0) return { kind: "math", messages: mathPrompt(m.problem), response };
  if (i % 4 === 1) return { kind: "math", messages: actorPrompt(m.problem, reasonerPlan(m.ops)), response };
  if (i % 4 === 2) return { kind: "math", messages: actorPrompt(m.problem, reasonerPlan(m.ops), failedRounds(m, rng)), response };
  const turns = Array.from({ length: rng.int(1, 2) }, (): ChatMessage[] => [
    { role: "assistant", content: boxed(Number(m.answer) + rng.int(1, 9)) },
    { role: "user", content: JUDGE_INCORRECT },
  ]).flat();
  return { kind: "math", messages: [...mathPrompt(m.problem), ...turns], response };
}

export const codePlan = (entry: string) => `Define ${entry}. Follow the rule in the problem for each input. Return the result.`;

/** Coding roles over a train-split task: plan, code (from that plan) or reflect, in turn. */
export function codeExample(t: SyntheticCodeTask, i: number): MixtureExample {
  if (i % 3 === 0) return { kind: "code", messages: codePlanPrompt(t.problem), response: codePlan(t.entry) };
  if (i % 3 === 1) return { kind: "code", messages: codePrompt(t.problem, codePlan(t.entry)), response: codeTarget(t.reference) };
  // as the coding workflow shows it: the bare function and the verifier's feedback (2 failing tests)
  const wrong = t.tests.flatMap((x, index) =>
    x.kind === "io" ? [] : [{ index, label: x.call, status: "wrong" as const, expected: JSON.stringify(x.expected), got: "undefined" }],
  );
  const failures = formatFeedback({ passRate: 0, passed: 0, total: wrong.length, tests: wrong, wallMs: 0 }, 2);
  return {
    kind: "code",
    messages: reflectPrompt(t.problem, t.reference, failures),
    response: `Check the rule in the problem for the failing inputs and return the expected value.`,
  };
}

/**
 * Builds the mixture for world `seed` (the same seed the evaluation uses).
 * @example const { examples, counts } = buildMixture(42);
 */
export function buildMixture(seed: number, counts: MixtureCounts = DEFAULT_MIXTURE_COUNTS): Mixture {
  const tasks = makeWorldTasks(seed);
  const rng = createKeyedRng(`base-model-mixture:${seed}`);
  const reserved = [...templateWords(), ...[...tasks.world.entities.values()].flatMap((e) => e.words)];
  const heldOutWords = wordSet(
    [...tasks.world.entities.values()].filter((e) => tasks.clusterSplit[e.cluster] !== "train").map((e) => e.name),
  );
  const nameSource = createNameSource(rng.fork("names"), reserved);
  const personName = () => `${nameSource.word(2, 2)} ${nameSource.word(2, 3)}`;
  const examples: MixtureExample[] = tasks.pretrainText.map((text) => ({ kind: "world-text", text }));

  // fresh worlds, each used for a handful of examples
  let world: WorldIndex = freshWorld(rng.fork("world0"), nameSource);
  let questions = chainQuestions(world);
  let uses = 0;
  const fresh = (): [WorldIndex, ChainQuestion] => {
    if (uses++ >= 40) {
      world = freshWorld(rng.fork(`world${uses}-${examples.length}`), nameSource);
      questions = chainQuestions(world);
      uses = 0;
    }
    return [world, rng.pick(questions)];
  };

  for (let i = 0; i < counts.copy; i++) examples.push(copyExample(fresh()[0], rng, personName));
  for (let i = 0; i < counts["copy-text"]; i++) examples.push(copyText(fresh()[0], rng));
  for (let i = 0; i < counts["answer-fresh"]; i++) examples.push(answerFresh(...fresh(), rng));
  const passagesOf = supportingPassages(tasks);
  const train = tasks.splits.train;
  for (let i = 0; i < counts["answer-train"]; i++) {
    const t = train[i % train.length];
    examples.push({
      kind: "answer-train",
      messages: answerPrompt(rng.shuffle(passagesOf(t)), t.question),
      response: answerTarget(t.answers[0]),
    });
  }
  for (let i = 0; i < counts.decompose; i++) {
    const [, q] = fresh();
    examples.push({ kind: "decompose", messages: decomposePrompt(q.question), response: queriesTarget(subQueries(q)) });
  }
  for (const kind of ["extract", "summarize"] as const)
    for (let i = 0; i < counts[kind]; i++) examples.push(evidenceExample(kind, ...fresh(), rng));
  for (let i = 0; i < counts.search; i++) examples.push(searchExample(...fresh(), rng));
  for (let i = 0; i < counts.update; i++) examples.push(updateExample(...fresh(), rng));
  for (let i = 0; i < counts.plan; i++) {
    const t = train[(i * 7) % train.length];
    examples.push({ kind: "plan", messages: planPrompt(t.question), response: answerTarget(t.answers[0]) });
  }
  const math = referenceMathTasks(seed).train.filter((m) => ![...wordSet([m.problem])].some((w) => heldOutWords.has(w)));
  for (let i = 0; i < counts.math && math.length > 0; i++) examples.push(mathExample(math[i % math.length], i, rng));
  for (let i = 0; i < counts.reasoner && math.length > 0; i++) {
    const m = math[(i * 5) % math.length];
    const history = i % 2 === 0 ? "" : failedRounds(m, rng);
    examples.push({ kind: "reasoner", messages: reasonerPrompt(m.problem, history), response: reasonerPlan(m.ops) });
  }
  // the first family only: models/base was made before the graded family existed (models/base-code adds it)
  const code = firstCodeTasks(seed).train;
  for (let i = 0; i < counts.code && code.length > 0; i++) examples.push(codeExample(code[i % code.length], i));
  const tally = Object.fromEntries(MIXTURE_KINDS.map((k) => [k, 0])) as Record<MixtureKind, number>;
  for (const e of examples) tally[e.kind]++;
  return { examples: rng.fork("order").shuffle(examples), counts: tally, tasks };
}

/** Every piece of text in an example (prompt contents and response), for leak checks and tokenizer training. */
export function exampleTexts(e: { text: string } | { messages: ChatMessage[]; response: string }): string[] {
  return "text" in e ? [e.text] : [...e.messages.map((m) => m.content), e.response];
}
