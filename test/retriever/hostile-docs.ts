// A generated document collection that stresses the tokenizer and the ranking: mixed scripts,
// case, diacritics and combining marks, CJK, emoji, digits, very short and very long words, Porter
// edge words, and duplicate texts (for tie order). Deterministic; test data only.

import type { RetrieverDoc } from "../../src/envs/retriever/types.js";

/** Words the Porter steps treat specially. */
export const PORTER_WORDS =
  "caresses ponies ties sky relational conditional rational valency digitizer hopeful goodness formative electrical adjustable caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky syzygy yyy ied eed ing sses generalizations oscillators triplicate hopefulness revival allowance inference airliner gyroscopic defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize probate rate cease controll roll agreement ement ment abilities tional rationale sensibility completely casually gently barely".split(
    " ",
  );

const POOL = [
  ...PORTER_WORDS,
  ..."Café CAFÉ café naïve Ærøskøbing Straße STRASSE İstanbul ıi Ǆemal ǅ ﬁnance Ｗｉｋｉ ⅫⅣ naïveté éé".split(" "),
  ..."e\u0301cole \u0301orphan a\u0308\u0308 n\u0303 x\u20dd Ελληνικά ΣΊΣΥΦΟΣ ς Москва МОСКВА ёжик".split(" "),
  ..."東京 東京都庁 日本語テキスト 한국어 हिन्दी العربية עברית ไทย 𐐀𐐨 𝔘𝔫𝔦 🙂 👩‍👩‍👧 🇫🇷".split(" "),
  ..."a I x ab to id of sky ies sss 7 42 3.14 ١٢٣ ² ½ 0x1F a䎎ed ü-ber o'brien e-mail foo_bar C++ #tag @user".split(" "),
  ..."Kora Velin Tamsrun Obrelia born city river".split(" "),
  // longer than the stemmer's 64 bytes, and (q…) than FTS5's 32768-byte term limit
  "x".repeat(65),
  "relational".repeat(7),
  "é".repeat(40),
  "Ab".repeat(33),
  "q".repeat(40_000),
];

/** A small seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const SEPARATORS = [" ", " ", " ", ", ", ". ", "\n", "\t", " — ", "/", "\u3000", "\u00a0", "!", " (", ") "];

/** `n` generated documents; every seventh repeats an earlier one's title and text. */
export function hostileDocs(n: number, seed = 1): RetrieverDoc[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const phrase = (words: number) => {
    let s = "";
    for (let i = 0; i < words; i++) s += (i ? pick(SEPARATORS) : "") + pick(POOL);
    return s;
  };
  const docs: RetrieverDoc[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % 7 === 0) {
      const twin = docs[Math.floor(r() * i)];
      docs.push({ id: `h${i}`, title: twin.title, text: twin.text });
    } else docs.push({ id: `h${i}`, title: i % 11 === 0 ? "" : phrase(1 + Math.floor(r() * 3)), text: phrase(Math.floor(r() * 40)) });
  }
  return docs;
}

/** Queries drawn from the documents (runs of their words) plus hand-picked hostile ones. */
export function hostileQueries(docs: readonly RetrieverDoc[], n: number, seed = 2): string[] {
  const r = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const d = docs[Math.floor(r() * docs.length)];
    const words = `${d.title} ${d.text}`.split(/\s+/).filter(Boolean);
    const at = Math.floor(r() * words.length);
    out.push(words.slice(at, at + 1 + Math.floor(r() * 5)).join(" "));
  }
  return [
    ...out,
    ...POOL,
    "caresses ponies ties",
    "CAFÉ café cafe",
    "é́cole",
    "\u0301",
    "\u20dd\u0301",
    "x".repeat(100_000),
    "q".repeat(40_000),
    'born in "Velora" AND (x*',
    "NEAR(Kora Velin) title:Kora -Kora ^Kora",
    "東京 日本語",
    "هيندي हिन्दी",
    Array.from({ length: 60 }, (_, i) => POOL[i]).join(" "),
  ];
}
