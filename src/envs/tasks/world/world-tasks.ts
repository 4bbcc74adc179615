// Turns a synthetic world into multi-hop QA tasks, the retriever's document collection and a
// pretraining corpus. Splits are whole clusters, so dev/test entities never reach train or pretraining.

import type { RetrieverDoc } from "../../retriever/types.js";
import { createKeyedRng, type KeyedRng } from "../../../rng.js";
import { cutSplits, DEFAULT_FRACTIONS, type QaTask, type Split, type SplitFractions, type Splits } from "../types.js";
import { type Entity, type Fact, makeWorld, type World, type WorldShape } from "./make-world.js";
import { FACT_PHRASINGS, QUESTION_TEMPLATES, type Relation } from "./phrasings.js";

/** Options for {@link makeWorldTasks}. */
export interface WorldTaskOptions extends WorldShape {
  /** How many documents state each fact, each in a different phrasing (1–3). Default 2. */
  docsPerFact?: number;
  /** Cluster fractions per split. Default 0.7 / 0.1 / 0.2. */
  fractions?: SplitFractions;
  /** Cap on questions per cluster (sampled evenly over hop counts first). Default: all. */
  questionsPerCluster?: number;
}

/** Everything a QA workflow needs. */
export interface WorldTasks {
  world: World;
  /** The collection the retriever serves: every fact of every cluster, train, dev and test. */
  docs: RetrieverDoc[];
  /** Text the base model may pretrain on: train-cluster facts and train Q/A only. */
  pretrainText: string[];
  splits: Splits<QaTask>;
  /** Split of each cluster, by cluster index. */
  clusterSplit: Split[];
}

type Edge = { object: string; fact: string };

function indexFacts(facts: readonly Fact[]): Map<Relation, Map<string, Edge>> {
  const idx = new Map<Relation, Map<string, Edge>>();
  const put = (r: Relation, s: string, e: Edge) => {
    if (!idx.has(r)) idx.set(r, new Map());
    idx.get(r)!.set(s, e);
  };
  for (const f of facts) {
    put(f.relation, f.subject, { object: f.object, fact: f.id });
    if (f.relation === "spouse") put("spouse", f.object, { object: f.subject, fact: f.id });
  }
  return idx;
}

function render(template: string, s: string, o: string): string {
  return template.replace("{s}", s).replace("{o}", o);
}

type SubjectFacts = Map<string, { fact: Fact; other: string; offset: number }[]>;

/** Each entity's facts (spouse from both ends), with the phrasing offset its documents start from. */
function factsBySubject(world: World, drng: KeyedRng): SubjectFacts {
  const factsOf: SubjectFacts = new Map();
  for (const f of world.facts) {
    const entries =
      f.relation === "spouse" ? [[f.subject, f.object] as const, [f.object, f.subject] as const] : [[f.subject, f.object] as const];
    for (const [s, o] of entries) {
      if (!factsOf.has(s)) factsOf.set(s, []);
      factsOf.get(s)!.push({ fact: f, other: o, offset: drng.int(0, FACT_PHRASINGS[f.relation].length - 1) });
    }
  }
  return factsOf;
}

/** Documents: per subject entity and phrasing round, its facts in chunks of at most two sentences, shuffled. */
function worldDocs(world: World, factsOf: SubjectFacts, drng: KeyedRng, docsPerFact: number): RetrieverDoc[] {
  const docs: RetrieverDoc[] = [];
  for (const [subject, list] of factsOf) {
    const s = world.entities.get(subject)!;
    for (let round = 0; round < docsPerFact; round++) {
      const shuffled = drng.shuffle(list);
      for (let i = 0; i < shuffled.length; i += 2) {
        const sentences = shuffled.slice(i, i + 2).map(({ fact, other, offset }) => {
          const forms = FACT_PHRASINGS[fact.relation];
          return render(forms[(offset + round) % forms.length], s.name, world.entities.get(other)!.name);
        });
        docs.push({ id: "", title: s.name, text: sentences.join(" ") });
      }
    }
  }
  return drng.shuffle(docs).map((d, i) => ({ ...d, id: `doc${String(i).padStart(5, "0")}` }));
}

/**
 * The retriever collection of any world (the same document builder {@link makeWorldTasks} uses):
 * for worlds made outside it, e.g. the base model's freshly named worlds.
 */
export const documentsOf = (world: World, rng: KeyedRng, docsPerFact = 2): RetrieverDoc[] => {
  const drng = rng.fork("docs");
  return worldDocs(world, factsBySubject(world, drng), drng, docsPerFact);
};

/**
 * Generates the world, its questions (1–3 hops), documents and pretraining text for `seed`.
 * @example
 * const { docs, splits } = makeWorldTasks(42);
 * splits.test[0]; // { question: "In which country was the founder of Kelvo Guild born?", answers: ["Tharnia"], hops: 3, ... }
 */
export function makeWorldTasks(seed: number | string, options: WorldTaskOptions = {}): WorldTasks {
  const rng = createKeyedRng(`world:${seed}`);
  const world = makeWorld(rng.fork("world"), options);
  const docsPerFact = Math.min(3, Math.max(1, options.docsPerFact ?? 2));
  const ent = (id: string) => world.entities.get(id)!;
  const idx = indexFacts(world.facts);

  const clusterOrder = rng.fork("clusters").shuffle(Array.from({ length: world.clusters }, (_, i) => i));
  const cut = cutSplits(clusterOrder, options.fractions ?? DEFAULT_FRACTIONS);
  const clusterSplit: Split[] = new Array(world.clusters);
  for (const split of ["train", "dev", "test"] as const) for (const c of cut[split]) clusterSplit[c] = split;

  const byCluster: QaTask[][] = Array.from({ length: world.clusters }, () => []);
  for (const x of world.entities.values()) {
    for (const [t, tpl] of QUESTION_TEMPLATES.entries()) {
      let cur: Entity | undefined = x;
      const chain: Entity[] = [x];
      const support: string[] = [];
      for (const r of tpl.chain) {
        const edge: Edge | undefined = cur ? idx.get(r)?.get(cur.id) : undefined;
        cur = edge ? ent(edge.object) : undefined;
        if (!cur || !edge) break;
        chain.push(cur);
        support.push(edge.fact);
      }
      if (!cur || chain.length !== tpl.chain.length + 1) continue;
      byCluster[x.cluster].push({
        id: `qa-${x.id}-t${t}`,
        question: tpl.text.replace("{x}", x.name),
        answers: [cur.name],
        hops: tpl.chain.length,
        entities: chain.map((e) => e.name),
        supportingFacts: support,
      });
    }
  }
  const qrng = rng.fork("questions");
  const cap = options.questionsPerCluster;
  const splits: Splits<QaTask> = { train: [], dev: [], test: [] };
  for (let c = 0; c < world.clusters; c++) {
    let qs = qrng.shuffle(byCluster[c]);
    if (cap !== undefined && qs.length > cap) {
      // round-robin over hop counts so a cap keeps a mix of 1, 2 and 3 hops
      const byHop = [1, 2, 3].map((h) => qs.filter((q) => q.hops === h));
      const picked: QaTask[] = [];
      for (let i = 0; picked.length < cap; i++) for (const list of byHop) if (i < list.length && picked.length < cap) picked.push(list[i]);
      qs = picked;
    }
    splits[clusterSplit[c]].push(...qs);
  }
  for (const s of ["train", "dev", "test"] as const) splits[s] = qrng.fork(s).shuffle(splits[s]);

  const drng = rng.fork("docs");
  const factsOf = factsBySubject(world, drng);
  const docs = worldDocs(world, factsOf, drng, docsPerFact);

  // Pretraining text: every phrasing of every train-cluster fact, plus train questions with answers.
  const pretrainText: string[] = [];
  for (const [subject, list] of factsOf) {
    const s = ent(subject);
    if (clusterSplit[s.cluster] !== "train") continue;
    pretrainText.push(
      list.flatMap(({ fact, other }) => FACT_PHRASINGS[fact.relation].map((t) => render(t, s.name, ent(other).name))).join(" "),
    );
  }
  for (const q of splits.train) pretrainText.push(`Question: ${q.question}\nAnswer: ${q.answers[0]}`);

  return { world, docs, pretrainText: rng.fork("pretrain").shuffle(pretrainText), splits, clusterSplit };
}

/**
 * Invented name words of dev/test entities that occur in train questions, train answers or the
 * pretraining text. Empty for every generated world; exported so users can check their own mixes.
 */
export function findEntityLeaks(tasks: WorldTasks, extraTrainText: readonly string[] = []): string[] {
  const seen = new Set<string>();
  const trainText = [...tasks.pretrainText, ...extraTrainText, ...tasks.splits.train.flatMap((q) => [q.question, ...q.answers])];
  for (const t of trainText) for (const w of t.toLowerCase().match(/\p{L}+/gu) ?? []) seen.add(w);
  const leaks: string[] = [];
  for (const e of tasks.world.entities.values()) {
    if (tasks.clusterSplit[e.cluster] === "train") continue;
    for (const w of e.words) if (seen.has(w.toLowerCase())) leaks.push(w);
  }
  return leaks;
}
