/**
 * Fixed, aligned blocks of remote survey files, kept in memory and shared by every reader of one
 * storage. A tile read from a bucket is a round trip whatever its size, and a map's neighbouring
 * tiles lie side by side in a COG (row by row within each overview), so one block fetched for a
 * tile also holds the tiles a viewer asks for next: GDAL's /vsicurl/ reads in whole chunks and
 * keeps them (CPL_VSIL_CURL_CHUNK_SIZE, VSI_CACHE) for the same reason, as cogeotiff's chunked
 * sources do. Survey files are never rewritten (a re-ingest writes a new version's keys), so a
 * block never goes stale.
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

export class BlockCache {
  readonly blockBytes: number;
  readonly #blocks: LruCache<Buffer>;

  /** `maxBytes`: the memory the blocks may hold, all files together. */
  constructor(maxBytes: number, blockBytes = BLOCK_BYTES) {
    this.blockBytes = blockBytes;
    this.#blocks = new LruCache<Buffer>({
      maxEntries: Math.max(1, Math.ceil(maxBytes / blockBytes)),
      maxWeight: maxBytes,
      weigh: (block) => block.byteLength,
    });
  }

  /** Block `index` of the file `file`, if held. */
  get(file: string, index: number): Buffer | undefined {
    return this.#blocks.get(`${index}\n${file}`);
  }

  /** Whether block `index` of `file` is held (not counted as a lookup). */
  has(file: string, index: number): boolean {
    return this.#blocks.has(`${index}\n${file}`);
  }

  /**
   * Holds block `index` of `file`. A block cut out of a larger answer (merged blocks, a socket's
   * read buffer) is copied, so the memory a block holds is its own and the budget is kept: a view
   * would keep the whole answer alive after its other blocks were pushed out.
   */
  set(file: string, index: number, block: Buffer): void {
    let own = block;
    if (block.buffer.byteLength !== block.byteLength) {
      own = Buffer.allocUnsafeSlow(block.byteLength);
      block.copy(own);
    }
    this.#blocks.set(`${index}\n${file}`, own);
  }

  get stats(): CacheStats {
    return this.#blocks.stats;
  }
}
