// Invented, globally unique name words built from syllables, for synthetic entities.
// Must never return the same word twice from one source or a word from the reserved list.

import { MasoError } from "../../errors.js";
import type { Rng } from "../../rng.js";

const ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "tr", "st", "th", "sh"];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"];
const CODAS = ["", "", "", "n", "r", "l", "s", "k", "m"];

/** Produces fresh capitalised words such as "Tharvel" or "Dumosk". */
export interface NameSource {
  /** A word of `minSyllables`–`maxSyllables` syllables never returned before. */
  word(minSyllables?: number, maxSyllables?: number): string;
}

/**
 * A name source over `rng`; `reserved` words (any case) are never produced.
 * @example createNameSource(createKeyedRng("1"), ["born"]).word() // e.g. "Velamor"
 */
export function createNameSource(rng: Rng, reserved: Iterable<string> = []): NameSource {
  const used = new Set<string>();
  for (const r of reserved) used.add(r.toLowerCase());
  return {
    word(minSyllables = 2, maxSyllables = 3) {
      for (let attempt = 0; attempt < 10_000; attempt++) {
        const n = rng.int(minSyllables, maxSyllables);
        let w = "";
        for (let i = 0; i < n; i++) w += rng.pick(ONSETS) + rng.pick(VOWELS) + (i === n - 1 ? rng.pick(CODAS) : "");
        if (used.has(w)) continue;
        used.add(w);
        return w[0].toUpperCase() + w.slice(1);
      }
      throw new MasoError("TASKS_NAMES_EXHAUSTED", "ran out of unique invented names", "generate a smaller world or allow more syllables");
    },
  };
}

/** Lowercased word tokens of a text (letters only), for leak checks. */
export function wordSet(texts: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const t of texts) for (const w of t.toLowerCase().match(/\p{L}+/gu) ?? []) out.add(w);
  return out;
}
