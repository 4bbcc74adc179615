// Generates the synthetic world: clusters of invented people, cities, countries and organisations,
// and the facts linking them. Facts never cross clusters, which is what makes entity-disjoint splits possible.

import { MasoError } from "../../../errors.js";
import { createNameSource } from "../names.js";
import type { KeyedRng } from "../../../rng.js";
import { ORG_SUFFIXES, type Relation, templateWords } from "./phrasings.js";

export type EntityKind = "person" | "city" | "country" | "org";

/** An invented entity. `words` are its invented name words (globally unique). */
export interface Entity {
  id: string;
  kind: EntityKind;
  name: string;
  words: string[];
  cluster: number;
}

/** A fact `subject relation object` (spouse is stored once per couple). */
export interface Fact {
  id: string;
  relation: Relation;
  subject: string;
  object: string;
}

/** The world: entities and facts, both indexed by id. */
export interface World {
  entities: Map<string, Entity>;
  facts: Fact[];
  clusters: number;
}

/** Size of the world. */
export interface WorldShape {
  /** Independent sub-worlds; splits are made of whole clusters. Default 20. */
  clusters?: number;
  /** Per cluster. Defaults 2, 4, 3, 8. */
  countries?: number;
  cities?: number;
  orgs?: number;
  people?: number;
}

/** Builds a world from `rng`; deterministic for a given stream. */
export function makeWorld(rng: KeyedRng, shape: WorldShape = {}): World {
  const clusters = shape.clusters ?? 20;
  const nCountries = shape.countries ?? 2;
  const nCities = shape.cities ?? 4;
  const nOrgs = shape.orgs ?? 3;
  const nPeople = shape.people ?? 8;
  if (clusters < 3 || nCountries < 1 || nCities < 1 || nOrgs < 1 || nPeople < 2)
    throw new MasoError("TASKS_BAD_SHAPE", "world too small", "use ≥3 clusters, ≥1 country/city/org and ≥2 people per cluster");
  const names = createNameSource(rng.fork("names"), templateWords());
  const entities = new Map<string, Entity>();
  const facts: Fact[] = [];
  const add = (kind: EntityKind, cluster: number, words: string[], suffix = ""): Entity => {
    const e: Entity = { id: `${kind}${entities.size}`, kind, name: words.join(" ") + suffix, words, cluster };
    entities.set(e.id, e);
    return e;
  };
  const fact = (relation: Relation, s: Entity, o: Entity) => facts.push({ id: `f${facts.length}`, relation, subject: s.id, object: o.id });

  for (let c = 0; c < clusters; c++) {
    const countries = Array.from({ length: nCountries }, () => add("country", c, [names.word(2, 3)]));
    const cities = Array.from({ length: nCities }, () => add("city", c, [names.word(2, 3)]));
    const people = Array.from({ length: nPeople }, () => add("person", c, [names.word(2, 2), names.word(2, 3)]));
    const orgs = Array.from({ length: nOrgs }, () => add("org", c, [names.word(2, 2)], ` ${rng.pick(ORG_SUFFIXES)}`));
    for (const [i, city] of cities.entries()) fact("city_in", city, i < countries.length ? countries[i] : rng.pick(countries));
    for (const org of orgs) {
      fact("based_in", org, rng.pick(cities));
      fact("founded_by", org, rng.pick(people));
    }
    for (const p of people) {
      fact("born_in", p, rng.pick(cities));
      fact("works_for", p, rng.pick(orgs));
    }
    const order = rng.shuffle(people);
    const married = 2 * Math.max(1, Math.floor(order.length / 4));
    for (let i = 0; i + 1 < married; i += 2) fact("spouse", order[i], order[i + 1]);
  }
  return { entities, facts, clusters };
}
