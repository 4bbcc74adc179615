// Sentence templates for the synthetic world: several phrasings per fact and the question templates
// for 1–3 hop questions. Text only; no randomness and no entity generation here.

/** A relation between two entities. `located_in` covers city→country and organisation→city. */
export type Relation = "born_in" | "works_for" | "city_in" | "based_in" | "founded_by" | "spouse";

/** Several ways to state a fact; `{s}` is the subject's name and `{o}` the object's. */
export const FACT_PHRASINGS: Record<Relation, readonly string[]> = {
  born_in: [
    "{s} was born in {o}.",
    "{s} is a native of {o}.",
    "The birthplace of {s} is {o}.",
    "{s} came into the world in the city of {o}.",
  ],
  works_for: ["{s} works for {o}.", "{s} is employed by {o}.", "{o} employs {s}.", "{s} has a job at {o}."],
  city_in: ["{s} is a city in {o}.", "{s} lies in the country of {o}.", "The city of {s} is located in {o}."],
  based_in: ["{s} is based in {o}.", "{s} has its headquarters in {o}.", "The headquarters of {s} are in {o}."],
  founded_by: ["{s} was founded by {o}.", "{o} founded {s}.", "{o} is the founder of {s}."],
  spouse: ["{s} is married to {o}.", "{s} and {o} are spouses.", "{o} is the spouse of {s}."],
};

/**
 * Question templates: a chain of relations followed from the subject `{x}` (each step from the
 * previous answer), and the question text. `spouse~` follows spouse in either direction.
 */
export const QUESTION_TEMPLATES: readonly { chain: readonly Relation[]; text: string }[] = [
  { chain: ["born_in"], text: "Where was {x} born?" },
  { chain: ["works_for"], text: "Which organisation does {x} work for?" },
  { chain: ["city_in"], text: "Which country is {x} in?" },
  { chain: ["based_in"], text: "In which city is {x} based?" },
  { chain: ["founded_by"], text: "Who founded {x}?" },
  { chain: ["spouse"], text: "Who is {x} married to?" },
  { chain: ["born_in", "city_in"], text: "In which country was {x} born?" },
  { chain: ["founded_by", "born_in"], text: "Where was the founder of {x} born?" },
  { chain: ["works_for", "founded_by"], text: "Who founded the organisation that {x} works for?" },
  { chain: ["works_for", "based_in"], text: "In which city is the employer of {x} based?" },
  { chain: ["spouse", "born_in"], text: "Where was the spouse of {x} born?" },
  { chain: ["based_in", "city_in"], text: "In which country is {x} based?" },
  { chain: ["founded_by", "born_in", "city_in"], text: "In which country was the founder of {x} born?" },
  { chain: ["works_for", "based_in", "city_in"], text: "In which country is the employer of {x} based?" },
  { chain: ["spouse", "works_for", "founded_by"], text: "Who founded the organisation that the spouse of {x} works for?" },
  { chain: ["spouse", "born_in", "city_in"], text: "In which country was the spouse of {x} born?" },
];

/** Common words of every template, which invented names must never collide with. */
export function templateWords(): string[] {
  const all = [...Object.values(FACT_PHRASINGS).flat(), ...QUESTION_TEMPLATES.map((q) => q.text), ...ORG_SUFFIXES, "question answer"];
  return [
    ...new Set(
      all
        .join(" ")
        .toLowerCase()
        .match(/\p{L}+/gu) ?? [],
    ),
  ];
}

/** Second words of organisation names ("Velmo Works"). Not unique; the first word is. */
export const ORG_SUFFIXES = ["Works", "Institute", "Company", "Guild", "Labs", "Foundation", "Trading", "Press"] as const;
