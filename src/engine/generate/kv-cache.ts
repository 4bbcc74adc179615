// The sampler's paged KV cache: per layer one K pool and one V pool of fixed-size blocks, with
// reference counts so sequences can share a prompt's blocks, and a block budget that admission
// reserves against. It only stores and moves cache rows; it computes nothing and holds no weights.
//
// Shapes: L layers, BS positions per block, W = KVH*HS floats per position. Pool l is (P*BS, W):
// position t of a sequence with block list `blocks` lives in row blocks[t / BS] * BS + t % BS.
import { MasoError } from "../../errors.js";
import type { ModelConfig } from "../config.js";
import { hugePages } from "../../native/binding.js";

/** Sizing of a {@link KvCache}. */
export interface KvCacheOptions {
  /** BS: positions per block; small blocks waste less on short sequences, large ones index less. */
  blockSize: number;
  /** Upper bound on the pools' memory in bytes (K and V of every layer together). */
  maxBytes: number;
}

/** Block pools that grow on demand up to a budget; blocks are reference counted. */
export class KvCache {
  readonly blockSize: number;
  /** W: floats per cached position in one layer (KVH*HS). */
  readonly width: number;
  readonly numLayers: number;
  /** Most blocks the budget allows. */
  readonly maxBlocks: number;
  /** Per-layer pools (P*BS, W); replaced by larger arrays when the cache grows, so never hold on to them. */
  k: Float32Array[];
  v: Float32Array[];
  private capacity = 0;
  private refs = new Int32Array(0);
  private freeList: number[] = [];
  private fresh = 0;
  private used = 0;
  private reserved = 0;

  constructor(cfg: ModelConfig, opts: KvCacheOptions) {
    if (!Number.isInteger(opts.blockSize) || opts.blockSize < 1)
      throw new MasoError("GENERATE_OPTIONS", `blockSize must be a positive integer, got ${opts.blockSize}`);
    this.blockSize = opts.blockSize;
    this.width = cfg.numKvHeads * cfg.headDim;
    this.numLayers = cfg.numLayers;
    const bytesPerBlock = 2 * this.numLayers * this.blockSize * this.width * 4;
    this.maxBlocks = Math.floor(opts.maxBytes / bytesPerBlock);
    if (this.maxBlocks < 1) {
      throw new MasoError(
        "GENERATE_OPTIONS",
        `a KV cache of ${opts.maxBytes} bytes holds no block of ${bytesPerBlock} bytes`,
        "raise cacheBytes or lower blockSize",
      );
    }
    this.k = Array.from({ length: this.numLayers }, () => new Float32Array(0));
    this.v = Array.from({ length: this.numLayers }, () => new Float32Array(0));
  }

  /** P: blocks the pools hold right now. */
  get poolBlocks(): number {
    return this.capacity;
  }

  /** Rows in each pool (P*BS). */
  get poolRows(): number {
    return this.capacity * this.blockSize;
  }

  /** Blocks referenced by anything. */
  get blocksInUse(): number {
    return this.used;
  }

  /** Blocks for `positions` cached positions. */
  blocksFor(positions: number): number {
    return Math.ceil(positions / this.blockSize);
  }

  /** Whether `n` more blocks fit in the budget next to those in use and promised. */
  canReserve(n: number): boolean {
    return this.used + this.reserved + n <= this.maxBlocks;
  }

  /** Promises `n` blocks to a sequence; allocate() later draws from the promise. */
  reserve(n: number): void {
    if (!this.canReserve(n))
      throw new MasoError("KV_CACHE_FULL", `cannot reserve ${n} KV-cache blocks`, "lower maxBatch or raise cacheBytes");
    this.reserved += n;
  }

  /** Returns an unused promise of `n` blocks. */
  unreserve(n: number): void {
    this.reserved = Math.max(0, this.reserved - n);
  }

  /** Takes one block out of an earlier reservation, with reference count 1. */
  allocate(): number {
    if (this.reserved < 1) throw new MasoError("KV_CACHE_STATE", "allocate() without a reservation");
    const id = this.freeList.length > 0 ? this.freeList.pop()! : this.fresh++;
    if (id >= this.capacity) this.grow(id + 1);
    this.reserved--;
    this.used++;
    this.refs[id] = 1;
    return id;
  }

  /** Adds a reference to a block (a second sequence reads it). */
  retain(block: number): void {
    if (this.refs[block] < 1) throw new MasoError("KV_CACHE_STATE", `retain() of free block ${block}`);
    this.refs[block]++;
  }

  /** References a block holds (0 = free). */
  refCount(block: number): number {
    return this.refs[block];
  }

  /** Drops a reference; the block is free when none remain. */
  release(block: number): void {
    if (this.refs[block] < 1) throw new MasoError("KV_CACHE_STATE", `release() of free block ${block}`);
    if (--this.refs[block] === 0) {
      this.used--;
      this.freeList.push(block);
    }
  }

  /** Copies the first `rows` positions of block `src` into block `dst`, in every layer. */
  copyBlock(src: number, dst: number, rows: number): void {
    const n = this.blockSize * this.width;
    for (let l = 0; l < this.numLayers; l++) {
      this.k[l].copyWithin(dst * n, src * n, src * n + rows * this.width);
      this.v[l].copyWithin(dst * n, src * n, src * n + rows * this.width);
    }
  }

  /** Pool row of position `pos` of a sequence that owns `blocks`. */
  slot(blocks: readonly number[], pos: number): number {
    return blocks[Math.floor(pos / this.blockSize)] * this.blockSize + (pos % this.blockSize);
  }

  private grow(need: number): void {
    const cap = Math.min(this.maxBlocks, Math.max(need, 2 * this.capacity, 16));
    const n = cap * this.blockSize * this.width;
    for (let l = 0; l < this.numLayers; l++) {
      const k = hugePages(new Float32Array(n));
      const v = hugePages(new Float32Array(n));
      k.set(this.k[l]);
      v.set(this.v[l]);
      this.k[l] = k;
      this.v[l] = v;
    }
    const refs = new Int32Array(cap);
    refs.set(this.refs);
    this.refs = refs;
    this.capacity = cap;
  }
}
