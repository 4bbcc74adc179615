// Full KV-cache blocks kept after the requests that computed them are done, so a later prompt that
// starts with the same tokens (the next turn of a conversation, a shared system prompt) reuses them
// instead of prefilling again. A block is found by its content: the adapter, the chain of blocks
// before it and its own tokens. The sampler drops everything when the weights change.
import type { KvCache } from "./kv-cache.js";

interface Cached {
  block: number;
  /** Names this exact prefix; the next block's key holds it, so a chain is matched block by block. */
  serial: number;
}

/** A chain position: the serial of the last matched or registered block (0 = none yet) and how many blocks it covers. */
export interface Chain {
  serial: number;
  blocks: number;
}

export const EMPTY_CHAIN: Chain = { serial: 0, blocks: 0 };

export class PrefixCache {
  /** By key, least recently used first (Map order); each holds one reference on its block. */
  private readonly byKey = new Map<string, Cached>();
  private readonly keyOf = new Map<number, string>();
  private nextSerial = 1;

  /** `limit`: most blocks kept; beyond it the least recently used blocks no request reads are dropped. */
  constructor(
    private readonly cache: KvCache,
    private readonly limit: number,
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  /**
   * The longest run of cached blocks that starts `tokens`, at most `maxBlocks`, each retained for
   * the caller (who releases them like blocks it allocated).
   */
  match(adapter: string | null, tokens: readonly number[], maxBlocks: number): { blocks: number[]; chain: Chain } {
    const blocks: number[] = [];
    const hits: string[] = [];
    let serial = 0;
    for (let k = 0; k < maxBlocks; k++) {
      const key = this.key(adapter, serial, tokens, k);
      const hit = this.byKey.get(key);
      if (!hit) break;
      this.cache.retain(hit.block);
      blocks.push(hit.block);
      hits.push(key);
      serial = hit.serial;
    }
    this.touch(hits);
    return { blocks, chain: { serial, blocks: blocks.length } };
  }

  /**
   * Records blocks `chain.blocks .. full-1` of a sequence whose positions hold `tokens` (`blocks`
   * its block list) and returns the chain that now covers `full` blocks. A block whose content is
   * cached already under another block is left out; the chain goes on through the cached one.
   */
  register(adapter: string | null, tokens: readonly number[], blocks: readonly number[], full: number, chain: Chain): Chain {
    let serial = chain.serial;
    const added: string[] = [];
    for (let k = chain.blocks; k < full; k++) {
      const key = this.key(adapter, serial, tokens, k);
      let hit = this.byKey.get(key);
      if (!hit && !this.keyOf.has(blocks[k])) {
        hit = { block: blocks[k], serial: this.nextSerial++ };
        this.cache.retain(hit.block);
        this.byKey.set(key, hit);
        this.keyOf.set(hit.block, key);
      }
      // a block cached under another prefix's key cannot carry this chain on
      if (!hit) return { serial, blocks: k };
      added.push(key);
      serial = hit.serial;
    }
    this.touch(added);
    this.trim();
    return { serial, blocks: full };
  }

  /** Drops the least recently used block no request reads; false when there is none. */
  evictOne(): boolean {
    for (const [key, c] of this.byKey)
      if (this.cache.refCount(c.block) === 1) {
        this.drop(key, c);
        return true;
      }
    return false;
  }

  /** Drops every block (the weights changed, or the sampler closed). */
  clear(): void {
    for (const [key, c] of [...this.byKey]) this.drop(key, c);
  }

  private drop(key: string, c: Cached): void {
    this.byKey.delete(key);
    this.keyOf.delete(c.block);
    this.cache.release(c.block);
  }

  private trim(): void {
    while (this.byKey.size > this.limit && this.evictOne());
  }

  /** Marks keys as just used, the last of a chain first, so chains are evicted from their ends. */
  private touch(keys: readonly string[]): void {
    for (let i = keys.length - 1; i >= 0; i--) {
      const c = this.byKey.get(keys[i])!;
      this.byKey.delete(keys[i]);
      this.byKey.set(keys[i], c);
    }
  }

  private key(adapter: string | null, parent: number, tokens: readonly number[], k: number): string {
    const bs = this.cache.blockSize;
    return `${adapter ?? ""}\u0000${parent}\u0000${tokens.slice(k * bs, (k + 1) * bs).join(",")}`;
  }
}
