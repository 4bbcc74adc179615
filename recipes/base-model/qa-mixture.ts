// The QA adaptation mixture: what models/base-qa trains on after models/base. The base model learned
// its evidence roles on one fact sentence among 0–2 distractors, but the workflows show them the
// retriever's top 4 documents, and there it corrupts what it copies (docs/notes/qa-workflows.md: REA's extract
// writes a verbatim passage for 25 % of questions; copying the top passage would be worth 4×). Here
// every evidence example is a real BM25 search, over worlds of the reference world's size with fresh
// names and over the reference world's train clusters (the questions RL trains on): `summarize`/
// `extract` copy the retrieved document that states the fact, `update` keeps it as the knowledge
// item, `search` asks for the next hop from those items, `answer` reads them.
// A replay share of the base mixture's QA kinds keeps decompose, plan and answer as they were.
// Train material only: fresh names avoid every reference-world word, replay is the leak-checked mixture.
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage } from "maso";
import {
  contentHash,
  openRetriever,
  createNameSource,
  templateWords,
  makeWorldTasks,
  type WorldTasks,
  type Entity,
  type RetrieverDoc,
  createKeyedRng,
  type KeyedRng,
} from "maso/envs";

import { freshRetrievalWorld } from "./fresh-world.js";
import { buildMixture, type MixtureKind, stepQuery, subQueries } from "./mixture.js";
import {
  answerPrompt,
  answerTarget,
  copied,
  extractPrompt,
  knowledgeAnswerPrompt,
  NO_USEFUL_INFORMATION,
  searchPrompt,
  searchTarget,
  summarizePrompt,
  updatePrompt,
} from "../../examples/workflows/common/prompts.js";
import { hasName } from "./world-passages.js";
import { type ChainQuestion, chainQuestions, indexWorld } from "./world-qa.js";

/** Kinds of examples in the QA mixture (`replay` holds the base mixture's QA kinds). */
export const QA_MIXTURE_KINDS = ["summarize", "extract", "update", "search", "answer-knowledge", "answer-evidence", "replay"] as const;
export type QaMixtureKind = (typeof QA_MIXTURE_KINDS)[number];

export type QaMixtureCounts = Record<QaMixtureKind, number>;

export const DEFAULT_QA_COUNTS: QaMixtureCounts = {
  summarize: 6000,
  extract: 5000,
  update: 2500,
  search: 3000,
  "answer-knowledge": 3000,
  "answer-evidence": 2000,
  replay: 6000,
};

/** Base-mixture kinds replayed (the QA roles the evidence examples do not cover, and answering). */
export const REPLAY_KINDS: readonly MixtureKind[] = ["copy", "answer-fresh", "answer-train", "decompose", "plan"];

/** Passages per search: the reference workflows' top-k (examples/workflows/common/world-qa.ts TOP_K). */
export const QA_TOP_K = 4;

/** Share of evidence examples whose passages answer another query (a missed search). */
const MISSED_SEARCH = 0.1;

/** Fresh worlds the examples are drawn from (each the reference world's size), besides the reference train clusters. */
const FRESH_WORLDS = 4;

/** Share of search/answer knowledge states with a "no useful information" item (a turn whose search missed). */
const MISSED_ITEM = 0.2;

type Step = ChainQuestion["steps"][number];

/** A passage states a fact when it names both of its ends. */
const states = (passage: string, s: Step): boolean => hasName(passage, s.subject.name) && hasName(passage, s.object.name);

/**
 * The evidence a perfect evidence role writes for `passages`: the best-ranked one that states one of
 * `facts`, verbatim, or "no useful information".
 */
export function evidenceTarget(passages: readonly string[], facts: readonly Step[]): string {
  return passages.find((p) => facts.some((f) => states(p, f))) ?? NO_USEFUL_INFORMATION;
}

/** Questions over a collection with a BM25 index on its documents (a temp file named by their content hash). */
export function searchable(questions: ChainQuestion[], docs: RetrieverDoc[]) {
  const dir = join(tmpdir(), "maso-qa-mixture");
  mkdirSync(dir, { recursive: true });
  const retriever = openRetriever(join(dir, `${contentHash(docs).slice(0, 16)}.bm25`), { docs, onStale: "rebuild" });
  const search = (query: string) => retriever.search(query, QA_TOP_K).map((h) => h.text);
  return { questions, search, close: () => retriever.close() };
}

/**
 * The reference world's train clusters alone: their questions (what RL trains on) over their own
 * documents. Facts never cross clusters, so no dev/test name can appear; the retriever sees fewer
 * distractors than the full collection, the price of not showing held-out documents.
 */
function trainClusters(ref: WorldTasks) {
  const isTrain = (e: Entity) => ref.clusterSplit[e.cluster] === "train";
  const train = [...ref.world.entities.values()].filter(isTrain);
  const names = new Set(train.map((e) => e.name));
  const questions = chainQuestions(indexWorld(ref.world.entities, ref.world.facts), train);
  return searchable(
    questions,
    ref.docs.filter((d) => names.has(d.title)),
  );
}

/** `knowledge` with, some of the time, a "no useful information" item where a search missed. */
function withMissedItem(knowledge: string[], rng: KeyedRng): string[] {
  if (rng.next() >= MISSED_ITEM) return knowledge;
  const at = rng.int(0, knowledge.length);
  return [...knowledge.slice(0, at), NO_USEFUL_INFORMATION, ...knowledge.slice(at)];
}

/**
 * An ideal M-ASK walk: per hop, the step query, its top-k passages and the evidence a copying
 * summarizer writes; it stops at the first hop whose fact the search does not surface.
 */
export function walk(q: ChainQuestion, search: (query: string) => string[]) {
  const turns: { query: string; passages: string[]; evidence: string }[] = [];
  for (const [i, s] of q.steps.entries()) {
    const query = stepQuery(q, i);
    const passages = search(query);
    const evidence = evidenceTarget(passages, [s]);
    turns.push({ query, passages, evidence });
    if (evidence === NO_USEFUL_INFORMATION) break;
  }
  return turns;
}

/** The knowledge state after `turns`: each turn's evidence, restated by `update` (as copied). */
export const knowledgeOf = (turns: readonly { evidence: string }[]) => turns.map((t) => t.evidence);

/** A chat example, or a replayed plain-text one. */
export type QaExample = { kind: QaMixtureKind; text: string } | { kind: QaMixtureKind; messages: ChatMessage[]; response: string };
const chat = (kind: QaMixtureKind, messages: ChatMessage[], response: string): QaExample => ({ kind, messages, response });

/**
 * Builds the QA adaptation mixture for seed `seed` (shuffled; deterministic).
 * @example const examples = buildQaMixture(42);
 */
export function buildQaMixture(seed: number, counts: QaMixtureCounts = DEFAULT_QA_COUNTS): QaExample[] {
  const rng = createKeyedRng(`qa-mixture:${seed}`);
  const reference = makeWorldTasks(seed);
  const reserved = [...templateWords(), ...[...reference.world.entities.values()].flatMap((e) => e.words)];
  const names = createNameSource(rng.fork("names"), reserved);
  const fresh = Array.from({ length: FRESH_WORLDS }, (_, i) => {
    const { index, docs } = freshRetrievalWorld(rng.fork(`world${i}`), names);
    return searchable(chainQuestions(index), docs);
  });
  const worlds = [...fresh, trainClusters(reference)];
  const examples: QaExample[] = [];
  const draw = (i: number) => {
    const w = worlds[i % worlds.length];
    return { w, q: rng.pick(w.questions) };
  };
  // a search that missed: a tenth of the evidence examples show another question's passages, which
  // state none of this question's facts, so "no useful information" stays a reply the role can give
  const retrieved = (w: (typeof worlds)[number], query: string) =>
    w.search(rng.next() < MISSED_SEARCH ? stepQuery(rng.pick(w.questions), 0) : query);
  try {
    for (let i = 0; i < counts.summarize; i++) {
      const { w, q } = draw(i);
      // the step query most of the time; the question itself is what a malformed search falls back to
      const hop = rng.int(0, q.hops - 1);
      const byQuestion = rng.next() < 0.15;
      const query = byQuestion ? q.question : stepQuery(q, hop);
      const passages = retrieved(w, query);
      const target = evidenceTarget(passages, byQuestion ? q.steps : [q.steps[hop]]);
      examples.push(chat("summarize", summarizePrompt(query, passages), copied(target)));
    }
    for (let i = 0; i < counts.extract; i++) {
      const { w, q } = draw(i);
      // decompose's sub-queries ("X founder birthplace") name the start entity: any chain fact is evidence
      const query = rng.next() < 0.15 ? q.question : rng.pick(subQueries(q));
      const passages = retrieved(w, query);
      examples.push(chat("extract", extractPrompt(query, passages), copied(evidenceTarget(passages, q.steps))));
    }
    for (let i = 0; i < counts.update; i++) {
      const { w, q } = draw(i);
      const turns = walk(q, w.search);
      const t = rng.int(0, turns.length - 1);
      // a missed search's "no useful information" is restated too (the item then says nothing)
      const evidence = rng.next() < MISSED_SEARCH ? NO_USEFUL_INFORMATION : turns[t].evidence;
      const prompt = updatePrompt(q.question, withMissedItem(knowledgeOf(turns.slice(0, t)), rng), evidence);
      examples.push(chat("update", prompt, copied(evidence)));
    }
    for (let i = 0; i < counts.search; i++) {
      const { w, q } = draw(i);
      const turns = walk(q, w.search);
      const found = turns.filter((t) => t.evidence !== NO_USEFUL_INFORMATION).length;
      const known = rng.int(0, found);
      const response = known === q.hops ? "<end>" : searchTarget(stepQuery(q, known));
      examples.push(chat("search", searchPrompt(q.question, withMissedItem(knowledgeOf(turns.slice(0, known)), rng)), response));
    }
    // the answer is the far end of the chain as far as the knowledge goes: the gold answer once every
    // hop is known, else the best guess it allows (an answer at an early turn, F1 0 but well-formed)
    for (let i = 0, n = 0; n < counts["answer-knowledge"]; i++) {
      const { w, q } = draw(i);
      const found = walk(q, w.search).filter((t) => t.evidence !== NO_USEFUL_INFORMATION);
      if (found.length === 0) continue;
      const known = rng.next() < 0.6 ? found.length : rng.int(1, found.length);
      const knowledge = withMissedItem(knowledgeOf(found.slice(0, known)), rng);
      examples.push(chat("answer-knowledge", knowledgeAnswerPrompt(knowledge, q.question), answerTarget(q.chain[known])));
      n++;
    }
    // REA's answer role reads the useful extracts of the sub-queries; only answerable sets are shown
    for (let i = 0, n = 0; n < counts["answer-evidence"]; i++) {
      const { w, q } = draw(i);
      const evidence = [...new Set(subQueries(q).map((sq) => evidenceTarget(w.search(sq), q.steps)))].filter(
        (e) => e !== NO_USEFUL_INFORMATION,
      );
      // answerable only when some evidence states the last hop (not the answer's name in another fact)
      if (!evidence.some((e) => states(e, q.steps[q.hops - 1]))) continue;
      examples.push(chat("answer-evidence", answerPrompt(evidence, q.question), answerTarget(q.answer)));
      n++;
    }
  } finally {
    for (const w of worlds) w.close();
  }
  const replay = rng.shuffle(buildMixture(seed).examples.filter((e) => REPLAY_KINDS.includes(e.kind)));
  for (const e of replay.slice(0, counts.replay)) examples.push({ ...e, kind: "replay" });
  return rng.fork("order").shuffle(examples);
}
