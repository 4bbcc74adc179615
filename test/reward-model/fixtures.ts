// A separable preference set for reward-model tests: the chosen response carries the marker word
// "please", the rejected one has another word in its place (same word count). Seeded, so every test sees the same data.
import { createRng } from "../../src/rng.js";
import type { RewardExample } from "../../src/rl/reward-model/data.js";

const WORDS = ["red", "blue", "cat", "dog", "sun", "map", "tree", "road", "cup", "box", "hat", "pen"];

/** `n` pairs as JSONL lines (prompt text or chat messages alternate). */
export function markerPairs(n: number, seed = 1): string {
  const rng = createRng(seed);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 3 }, () => rng.pick(WORDS));
    const at = rng.int(0, words.length);
    const chosen = [...words.slice(0, at), "please", ...words.slice(at)].join(" ");
    const rejected = [...words.slice(0, at), rng.pick(WORDS), ...words.slice(at)].join(" ");
    const ask = `bring ${rng.pick(WORDS)}`;
    const prompt = i % 2 === 0 ? ask : [{ role: "user", content: ask }];
    lines.push(JSON.stringify({ prompt, chosen, rejected }));
  }
  return `${lines.join("\n")}\n`;
}

export type { RewardExample };

/**
 * `n` arithmetic pairs: "a+b=" answered with the true sum (chosen) or a sum off by 1 to 3
 * (rejected), single digits so a tiny model can learn it.
 */
export function sumPairs(n: number, seed = 1): string {
  const rng = createRng(seed);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = rng.int(0, 9);
    const b = rng.int(0, 9);
    const off = rng.pick([-3, -2, -1, 1, 2, 3]);
    const wrong = a + b + off < 0 ? a + b - off : a + b + off;
    lines.push(JSON.stringify({ prompt: `${a}+${b}=`, chosen: String(a + b), rejected: String(wrong) }));
  }
  return `${lines.join("\n")}\n`;
}
