// Which lane last took a prompt starting with given blocks of tokens. Each lane's sampler keeps
// the KV blocks of prompts and answers it computed (engine/generate/prefix-cache.ts), so the next
// turn of a conversation, or another sample of the same prompt, is cheapest on the lane that ran
// the last one. Keys are hashes: a collision only sends a request to a lane without its blocks.

/** Positions per routing block: the sampler's default KV block, so a match is a reusable block. */
const BLOCK = 16;

export class PrefixRoutes {
  private readonly laneOf = new Map<number, number>();

  /** The lane that took the longest recorded prefix of a prompt with these {@link blockKeys}, and that prefix's length in blocks. */
  match(keys: readonly number[]): { lane: number; blocks: number } | null {
    let found: { lane: number; blocks: number } | null = null;
    for (let k = 0; k < keys.length; k++) {
      const lane = this.laneOf.get(keys[k]);
      if (lane === undefined) break;
      found = { lane, blocks: k + 1 };
    }
    return found;
  }

  /** Notes that `lane` now holds every full block of the prompt with these {@link blockKeys}. */
  record(keys: readonly number[], lane: number): void {
    for (const key of keys) this.laneOf.set(key, lane);
  }

  /** Forgets everything (the lanes dropped their caches). */
  clear(): void {
    this.laneOf.clear();
  }
}

/** A prompt's routing keys: one FNV-1a chain over the adapter name and the tokens, read off at each full block. */
export function blockKeys(adapter: string | null, tokens: readonly number[]): number[] {
  let h = 0x811c9dc5;
  const mix = (x: number) => {
    h = Math.imul(h ^ x, 0x01000193) >>> 0;
  };
  for (const ch of adapter ?? "") mix(ch.charCodeAt(0));
  mix(-1); // ends the name: no token id or char code takes this value
  const keys: number[] = [];
  for (let t = 0; t + BLOCK <= tokens.length; t += BLOCK) {
    for (let i = t; i < t + BLOCK; i++) mix(tokens[i]);
    keys.push(h);
  }
  return keys;
}
