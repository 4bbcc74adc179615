// Freshly invented worlds for the copying curriculum: the world generator's structure with every name
// word replaced by a new word from a shared name source, so a model must copy names from its prompt.
// The name source must reserve every dev/test word (see mixture.ts); this file never checks that.
import {
  type RetrieverDoc,
  type NameSource,
  type Entity,
  makeWorld,
  type World,
  type WorldShape,
  documentsOf,
  type KeyedRng,
} from "maso/envs";

import { type WorldIndex, indexWorld } from "./world-qa.js";

/** `shape`'s world with every entity renamed from `names` (same ids, clusters and facts). */
function renamedWorld(rng: KeyedRng, names: NameSource, shape: WorldShape): World {
  const base = makeWorld(rng, shape);
  const entities = new Map<string, Entity>();
  for (const e of base.entities.values()) {
    const words = e.words.map((_, i) => ((e.kind === "person" && i === 0) || e.kind === "org" ? names.word(2, 2) : names.word(2, 3)));
    const suffix = e.name.slice(e.words.join(" ").length);
    entities.set(e.id, { ...e, words, name: words.join(" ") + suffix });
  }
  return { ...base, entities };
}

/**
 * A small world (3 clusters) whose names all come from `names`.
 * @example const w = freshWorld(rng, createNameSource(rng.fork("n"), reservedWords));
 */
export function freshWorld(rng: KeyedRng, names: NameSource): WorldIndex {
  const w = renamedWorld(rng, names, { clusters: 3, countries: 2, cities: 3, orgs: 2, people: 5 });
  return indexWorld(w.entities, w.facts);
}

/**
 * A world of the reference world's size (20 clusters, the generator's defaults) whose names all come
 * from `names`, with its retriever collection built exactly as the reference world's: what a role sees
 * after a real top-k search, over entities it has never seen.
 */
export function freshRetrievalWorld(rng: KeyedRng, names: NameSource): { index: WorldIndex; docs: RetrieverDoc[] } {
  const w = renamedWorld(rng, names, {});
  return { index: indexWorld(w.entities, w.facts), docs: documentsOf(w, rng.fork("documents")) };
}
