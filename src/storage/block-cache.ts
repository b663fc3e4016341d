/**
 * Fixed, aligned blocks of remote survey files, kept in memory and shared by every reader of one
 * storage. A tile read from a bucket is a round trip whatever its size, and a map's neighbouring
 * tiles lie side by side in a COG (row by row within each overview), so one block fetched for a
 * tile also holds the tiles a viewer asks for next: GDAL's /vsicurl/ reads in whole chunks and
 * keeps them (CPL_VSIL_CURL_CHUNK_SIZE, VSI_CACHE) for the same reason, as cogeotiff's chunked
 * sources do. Survey files are never rewritten (a re-ingest writes a new version's keys), so a
 * block never goes stale.
 *
 * The blocks live in memory the cache takes once, when it is made: slots of one block each, in a
 * few large buffers. A block fetched is written into a free slot, and a block pushed out gives its
 * slot to a later one. A new ArrayBuffer for every block (as before) is memory outside V8's heap
 * that V8 answers with a full collection of the whole heap each time enough of it has been made:
 * on a server filling its cache that was a full collection during the storage benchmark's cold
 * composites, and about half of what a cold composite cost beyond one read from a local disk
 * (docs/deploy.md, "Block memory taken once"). Taken once, the budget is counted once.
 */
import { type CacheStats, LruCache } from '../cache/lru.js';

/**
 * The block size: several JPEG tiles of 256 px (15-40 kB each). Measured in the storage benchmark
 * (cold composites on a server that served pass-through tiles of the same area first), bucket
 * requests per tile were 1.13 with 64 KiB blocks, 0.62 with 128 KiB and 0.23 with 256 KiB, and
 * fewer kB fetched per tile with 256 than with 64. A miss costs a real bucket a few ms more
 * transfer than a single tile's range; its tens of ms of latency are the same.
 */
export const BLOCK_BYTES = 256 * 1024;

/** The slots are taken in buffers of at most this many bytes (a large cache is several of them). */
const SLAB_BYTES = 64 * 1024 * 1024;
/** Slots kept free for blocks on their way, at most (an eighth of a smaller cache's, at least one). */
const MAX_SPARE_SLOTS = 8;

export class BlockCache {
  readonly blockBytes: number;
  readonly #blocks: LruCache<Buffer>;
  /** The buffers the slots are cut from: a block whose memory is one of these is a slot. */
  readonly #slabs = new Set<ArrayBufferLike>();
  /** Slots no block holds, nor a read under way. */
  readonly #free: Buffer[] = [];
  /** Slots given up in this turn of the event loop: free from the next one on (`release`). */
  #leaving: Buffer[] = [];

  /**
   * `maxBytes`: the memory the blocks may hold, all files together: taken now (the kernel gives
   * pages as they are first written, so an idle cache costs address space, not memory).
   */
  constructor(maxBytes: number, blockBytes = BLOCK_BYTES) {
    this.blockBytes = blockBytes;
    const slots = Math.max(1, Math.floor(maxBytes / blockBytes));
    const perSlab = Math.max(1, Math.floor(SLAB_BYTES / blockBytes));
    for (let first = 0; first < slots; first += perSlab) {
      const count = Math.min(perSlab, slots - first);
      const slab = Buffer.allocUnsafeSlow(count * blockBytes);
      this.#slabs.add(slab.buffer);
      for (let i = 0; i < count; i++) this.#free.push(slab.subarray(i * blockBytes, (i + 1) * blockBytes));
    }
    // A few slots stay out of the held blocks' count: a block fetched takes its slot before the
    // one it pushes out is free (from the next turn on), and several may come in one turn.
    const spare = slots > 1 ? Math.min(MAX_SPARE_SLOTS, Math.max(1, Math.floor(slots / 8))) : 0;
    const held = slots - spare;
    this.#blocks = new LruCache<Buffer>({
      maxEntries: held,
      maxWeight: held * blockBytes,
      weigh: (block) => block.byteLength,
      onEvict: (_, block) => this.release(block),
    });
  }

  /** Block `index` of the file `file`, if held: to be copied from at once, not kept. */
  get(file: string, index: number): Buffer | undefined {
    return this.#blocks.get(`${index}\n${file}`);
  }

  /** Whether block `index` of `file` is held (not counted as a lookup). */
  has(file: string, index: number): boolean {
    return this.#blocks.has(`${index}\n${file}`);
  }

  /**
   * Memory for a block of `bytes` (at most `blockBytes`) about to be fetched: a free slot, or new
   * memory of its own when every slot is taken (a burst of blocks in one turn; the slots they
   * push out are free again from the next). Held by `set`, or given back by `release`.
   */
  allocate(bytes: number): Buffer {
    const slot = bytes <= this.blockBytes ? this.#free.pop() : undefined;
    return slot ? slot.subarray(0, bytes) : Buffer.allocUnsafeSlow(bytes);
  }

  /**
   * Holds block `index` of `file`. Memory from `allocate` is held as it is; any other block (cut
   * out of a larger answer, say) is copied into a slot, so the budget is kept: a view would keep
   * the whole answer alive after its other blocks were pushed out.
   */
  set(file: string, index: number, block: Buffer): void {
    let own = block;
    if (!this.#slabs.has(block.buffer) && block.buffer.byteLength !== block.byteLength) {
      own = this.allocate(block.byteLength);
      block.copy(own);
    }
    this.#blocks.set(`${index}\n${file}`, own);
  }

  get stats(): CacheStats {
    return this.#blocks.stats;
  }

  /**
   * Memory from `allocate` no longer held: a block pushed out, or one whose read failed. A slot is
   * free again from the next turn of the event loop on: a reader handed a block copies out of it
   * in the turn it is handed it (range-reader.ts), so none can see its slot written over. Memory of
   * its own (not a slot) is left to the garbage collector.
   */
  release(block: Buffer): void {
    if (!this.#slabs.has(block.buffer)) return;
    if (this.#leaving.length === 0)
      setImmediate(() => {
        for (const slot of this.#leaving) this.#free.push(slot);
        this.#leaving = [];
      });
    this.#leaving.push(Buffer.from(block.buffer, block.byteOffset, this.blockBytes));
  }
}
