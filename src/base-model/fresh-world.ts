// Freshly invented worlds for the copying curriculum: the world generator's structure with every name
// word replaced by a new word from a shared name source, so a model must copy names from its prompt.
// The name source must reserve every dev/test word (see mixture.ts); this file never checks that.
import type { NameSource } from "../envs/tasks/names.js";
import type { Rng } from "../envs/tasks/rng.js";
import { type Entity, generateWorld } from "../envs/tasks/world/generate-world.js";
import { type WorldIndex, indexWorld } from "./world-qa.js";

/**
 * A small world (3 clusters) whose names all come from `names`.
 * @example const w = freshWorld(rng, createNameSource(rng.fork("n"), reservedWords));
 */
export function freshWorld(rng: Rng, names: NameSource): WorldIndex {
  const base = generateWorld(rng, { clusters: 3, countries: 2, cities: 3, orgs: 2, people: 5 });
  const entities = new Map<string, Entity>();
  for (const e of base.entities.values()) {
    const words = e.words.map((_, i) => ((e.kind === "person" && i === 0) || e.kind === "org" ? names.word(2, 2) : names.word(2, 3)));
    const suffix = e.name.slice(e.words.join(" ").length);
    entities.set(e.id, { ...e, words, name: words.join(" ") + suffix });
  }
  return indexWorld(entities, base.facts);
}
