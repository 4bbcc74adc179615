// Multi-hop questions with their supporting passages over any synthetic world (entities + facts),
// phrased with the world generator's templates. Used for freshly invented worlds (the copying
// curriculum) and, through the retriever's documents, for the real world's splits.

import { type Entity, type Fact, FACT_PHRASINGS, QUESTION_TEMPLATES, type Relation, type KeyedRng } from "maso/envs";

/** A question over a world with its chain of facts. */
export interface ChainQuestion {
  question: string;
  answer: string;
  hops: number;
  /** Subject-first entity names along the chain, answer last. */
  chain: string[];
  /** Supporting facts as (subject name, fact) in chain order, subject = the entity the step starts from. */
  steps: { subject: Entity; object: Entity; fact: Fact }[];
}

/** Indexed view of a world: entity by id, outgoing edges per relation (spouse both ways). */
export interface WorldIndex {
  entities: ReadonlyMap<string, Entity>;
  edges: Map<Relation, Map<string, Fact>>;
  /** Facts stated about each entity id (as subject, spouse both ways). */
  factsOf: Map<string, Fact[]>;
}

/** Builds the lookups {@link chainQuestions} and {@link factSentence} need. */
export function indexWorld(entities: ReadonlyMap<string, Entity>, facts: readonly Fact[]): WorldIndex {
  const edges = new Map<Relation, Map<string, Fact>>();
  const factsOf = new Map<string, Fact[]>();
  const put = (s: string, f: Fact) => {
    if (!edges.has(f.relation)) edges.set(f.relation, new Map());
    edges.get(f.relation)!.set(s, f);
    if (!factsOf.has(s)) factsOf.set(s, []);
    factsOf.get(s)!.push(f);
  };
  for (const f of facts) {
    put(f.subject, f);
    if (f.relation === "spouse") put(f.object, f);
  }
  return { entities, edges, factsOf };
}

/** The other end of `fact` seen from `from`. */
export function otherEnd(fact: Fact, from: string): string {
  return fact.subject === from ? fact.object : fact.subject;
}

/** Every 1–3 hop question whose chain starts at one of `starts` (all entities by default). */
export function chainQuestions(w: WorldIndex, starts?: readonly Entity[]): ChainQuestion[] {
  const out: ChainQuestion[] = [];
  for (const x of starts ?? w.entities.values()) {
    for (const tpl of QUESTION_TEMPLATES) {
      let cur = x;
      const steps: ChainQuestion["steps"] = [];
      for (const r of tpl.chain) {
        const f = w.edges.get(r)?.get(cur.id);
        if (!f) break;
        const next = w.entities.get(otherEnd(f, cur.id))!;
        steps.push({ subject: cur, object: next, fact: f });
        cur = next;
      }
      if (steps.length !== tpl.chain.length) continue;
      out.push({
        question: tpl.text.replace("{x}", x.name),
        answer: cur.name,
        hops: steps.length,
        chain: [x.name, ...steps.map((s) => s.object.name)],
        steps,
      });
    }
  }
  return out;
}

/** One sentence stating `fact` about `subject`, in a random phrasing. */
export function factSentence(w: WorldIndex, fact: Fact, subjectId: string, rng: KeyedRng): string {
  const s = w.entities.get(subjectId)!.name;
  const o = w.entities.get(otherEnd(fact, subjectId))!.name;
  return rng.pick(FACT_PHRASINGS[fact.relation]).replace("{s}", s).replace("{o}", o);
}

/**
 * A passage like the retriever's documents: `fact` about `subjectId` plus, half of the time,
 * one more fact about the same subject, in random order.
 */
export function factPassage(w: WorldIndex, fact: Fact, subjectId: string, rng: KeyedRng): string {
  const others = (w.factsOf.get(subjectId) ?? []).filter((f) => f !== fact);
  const facts = others.length > 0 && rng.next() < 0.5 ? rng.shuffle([fact, rng.pick(others)]) : [fact];
  return facts.map((f) => factSentence(w, f, subjectId, rng)).join(" ");
}
