/**
 * Byte ranges of one remote file, read as few requests as the tile reader's pattern allows: the
 * same range asked for twice at once is one request, and ranges asked for in the same turn of
 * the event loop that lie close together (a COG tile and its mask tile are neighbours in GDAL's
 * layout) go out as one request and are cut apart again. With a block cache, reads are widened
 * to whole aligned blocks, which later reads of the same blocks take from memory.
 */
import type { BlockCache } from './block-cache.js';
import type { IntoSource } from './storage.js';

/** Fetches `length` bytes at `offset` (to the end when `length` is undefined). */
export type RangeFetch = (offset: number, length: number | undefined) => Promise<Buffer>;

/**
 * The same bytes as buffers of `partBytes` each (the last may be shorter), each owning its
 * memory: blocks for the block cache, written as the answer arrives, with no joined copy of the
 * whole answer to allocate and cut apart again. Large short-lived buffers are what the garbage
 * collector pays for on this path (docs/deploy.md).
 */
export type RangePartsFetch = (
  offset: number,
  length: number,
  partBytes: number,
  /** Called as each part is complete, in order, before the whole answer is. */
  arrived?: (index: number, part: Buffer) => void,
  /** Memory for each part (the block cache's slots); new memory of the part's own without it. */
  allocate?: (bytes: number) => Buffer,
) => Promise<Buffer[]>;

/** A fetched range: whole, or in parts (RangePartsFetch). */
type Fetched = Buffer | Buffer[];

/** Ranges closer than this are read as one (reading the gap costs less than a round trip). */
const MERGE_GAP_BYTES = 64 * 1024;
/** A merged request never grows past this. */
const MAX_MERGED_BYTES = 4 * 1024 * 1024;
/** Read-ahead on sequential misses (`#readAhead`) grows to this many bytes a request at most. */
const MAX_READ_AHEAD_BYTES = 2 * 1024 * 1024;

interface Wanted {
  offset: number;
  end: number;
  resolve(bytes: Fetched): void;
  reject(error: unknown): void;
  /** Its blocks one by one as they come, when the store answers in blocks (index from its start). */
  arrived?: (index: number, block: Buffer) => void;
}

export interface RangeStatistics {
  /** Requests sent to the store. */
  requests: number;
  /** Bytes they returned. */
  bytes: number;
}

export class RangeReader implements IntoSource {
  readonly url: URL;
  readonly #fetch: RangeFetch;
  readonly #fetchParts: RangePartsFetch | undefined;
  readonly #statistics: RangeStatistics;
  readonly #blocks: BlockCache | undefined;
  readonly #file: string;
  readonly #inFlight = new Map<string, Promise<Buffer>>();
  readonly #blocksInFlight = new Map<number, Promise<Buffer>>();
  #batch: Wanted[] = [];
  /** The block after the last run of blocks fetched, and how many that run had (`#readAhead`). */
  #nextBlock = -1;
  #run = 1;

  /**
   * `statistics`: counts shared by the readers of one storage (benchmarks report them).
   * `blocks`: the storage's block cache, if it keeps one; `fetchParts`, if the store can answer
   * in blocks.
   */
  constructor(
    url: URL,
    fetch: RangeFetch,
    statistics: RangeStatistics,
    blocks?: BlockCache,
    fetchParts?: RangePartsFetch,
  ) {
    this.url = url;
    this.#fetch = fetch;
    // Parts are blocks: without a block cache there is nothing to cut them for.
    this.#fetchParts = blocks ? fetchParts : undefined;
    this.#statistics = statistics;
    this.#blocks = blocks;
    this.#file = url.href;
  }

  async fetch(offset: number, length?: number): Promise<ArrayBuffer> {
    const bytes = await this.read(offset, length);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  /** The bytes copied once, into the tile reader's own buffer (`fetch` would copy them twice). */
  async fetchInto(offset: number, into: Uint8Array): Promise<number> {
    if (this.#blocks && into.byteLength > 0) return this.#copyBlocks(this.#blocks, offset, into);
    const bytes = await this.read(offset, into.byteLength);
    into.set(bytes);
    return bytes.byteLength;
  }

  /**
   * The bytes: out of the blocks, a copy of their own (a held block's memory goes to another block
   * once it is pushed out); without blocks, a view that may be shared (another reader's answer),
   * not to be written into. `fetch` answers a copy.
   */
  read(offset: number, length?: number): Promise<Buffer> {
    if (length === undefined) return this.#send(offset, undefined);
    if (this.#blocks && length > 0) {
      const into = Buffer.allocUnsafe(length);
      return this.#copyBlocks(this.#blocks, offset, into).then((read) => into.subarray(0, read));
    }
    const id = `${offset}+${length}`;
    let reading = this.#inFlight.get(id);
    if (!reading) {
      reading = this.#want(offset, offset + length)
        .then(whole)
        .finally(() => this.#inFlight.delete(id));
      this.#inFlight.set(id, reading);
    }
    return reading;
  }

  /**
   * Fills `into` from the blocks the bytes lie in: those held at once, the others as this turn's
   * batch fetches them; resolves to how many bytes there were (fewer past the end of the file).
   * Each block is copied from in the turn it is handed over, never later: a block pushed out of
   * the cache gives its memory to another from the next turn on (BlockCache).
   */
  #copyBlocks(blocks: BlockCache, offset: number, into: Uint8Array): Promise<number> {
    const size = blocks.blockBytes;
    const length = into.byteLength;
    const first = Math.floor(offset / size);
    const last = Math.floor((offset + length - 1) / size);
    let read = length;
    const copy = (block: Buffer, index: number) => {
      const start = index * size;
      const from = Math.max(offset, start);
      const to = Math.min(offset + length, start + block.byteLength);
      if (to > from) into.set(block.subarray(from - start, to - start), from - offset);
      // A short block is the file's last: the bytes end with it.
      if (block.byteLength < size) read = Math.min(read, Math.max(0, start + block.byteLength - offset));
    };
    const fetching: Promise<void>[] = [];
    for (let index = first; index <= last; index++) {
      const held = blocks.get(this.#file, index);
      if (held) copy(held, index);
      else fetching.push(this.#block(blocks, index).then((block) => copy(block, index)));
    }
    if (fetching.length === 0) return Promise.resolve(read);
    return Promise.all(fetching).then(() => read);
  }

  /**
   * Block `index`, fetched with the blocks read ahead after it. Each block is held and handed to
   * its readers the moment its last byte has come, not when the whole run has: a tile in the run's
   * first block waits for 256 KiB, not 2 MiB.
   */
  #block(blocks: BlockCache, index: number): Promise<Buffer> {
    const reading = this.#blocksInFlight.get(index);
    if (reading) return reading;
    const size = blocks.blockBytes;
    const count = this.#readAhead(blocks, index);
    const handed: ((part: Buffer) => void)[] = [];
    const failed: ((error: unknown) => void)[] = [];
    for (let i = 0; i < count; i++) {
      const at = index + i;
      const block = new Promise<Buffer>((resolve, reject) => {
        handed.push((part) => {
          if (this.#blocksInFlight.get(at) !== block) return;
          this.#blocksInFlight.delete(at);
          // A run may reach past the end of the file: nothing there to hold.
          if (part.byteLength > 0) blocks.set(this.#file, at, part);
          resolve(part);
        });
        failed.push((error) => {
          if (this.#blocksInFlight.get(at) !== block) return;
          this.#blocksInFlight.delete(at);
          reject(error);
        });
      });
      // Blocks read ahead may have no reader: their failure is their readers' to see, if any come.
      block.catch(() => undefined);
      this.#blocksInFlight.set(at, block);
    }
    const hand = (i: number, part: Buffer) => handed[i]?.(part);
    this.#want(index * size, (index + count) * size, hand).then(
      (bytes) => {
        for (let i = 0; i < count; i++)
          hand(i, Array.isArray(bytes) ? (bytes[i] ?? EMPTY) : bytes.subarray(i * size, (i + 1) * size));
      },
      (error: unknown) => {
        for (const fail of failed) fail(error);
      },
    );
    return this.#blocksInFlight.get(index) as Promise<Buffer>;
  }

  /**
   * How many blocks to fetch from `index` on: one for a read elsewhere in the file, twice the last
   * run's for a miss just after it, as a viewer sweeping the map or a raster read walking rows
   * makes. GDAL's /vsicurl/ does the same (VSICurlHandle::Read doubles its download on consecutive
   * reads, and falls back to one chunk on random ones). The run stops before a block held or in
   * flight.
   */
  #readAhead(blocks: BlockCache, index: number): number {
    const most = Math.max(1, Math.floor(MAX_READ_AHEAD_BYTES / blocks.blockBytes));
    this.#run = index === this.#nextBlock ? Math.min(this.#run * 2, most) : 1;
    let count = 1;
    while (count < this.#run && !this.#blocksInFlight.has(index + count) && !blocks.has(this.#file, index + count))
      count++;
    this.#nextBlock = index + count;
    return count;
  }

  /** Bytes `offset` to `end`, sent with the others asked for in this turn. */
  #want(offset: number, end: number, arrived?: Wanted['arrived']): Promise<Fetched> {
    return new Promise<Fetched>((resolve, reject) => {
      if (this.#batch.length === 0) setImmediate(() => this.#flush());
      this.#batch.push({ offset, end, resolve, reject, arrived });
    });
  }

  #flush(): void {
    const batch = this.#batch.sort((a, b) => a.offset - b.offset);
    this.#batch = [];
    let group: Wanted[] = [];
    let start = 0;
    let end = 0;
    const send = () => {
      const members = group;
      const from = start;
      const size = this.#blocks?.blockBytes ?? 0;
      // Runs of whole blocks (all a block cache asks for) come in blocks when the store can send them so.
      const inBlocks =
        this.#fetchParts !== undefined &&
        size > 0 &&
        members.every((w) => w.end > w.offset && w.offset % size === 0 && w.end % size === 0);
      // A block that has come goes at once to the member whose range holds it.
      const arrived = (index: number, block: Buffer) => {
        const at = from + index * size;
        for (const wanted of members)
          if (at >= wanted.offset && at < wanted.end) wanted.arrived?.((at - wanted.offset) / size, block);
      };
      const sent: Promise<Fetched> = inBlocks
        ? this.#sendParts(from, end - from, size, arrived)
        : this.#send(from, end - from);
      sent.then(
        (bytes) => {
          for (const wanted of members) {
            if (Array.isArray(bytes))
              wanted.resolve(bytes.slice((wanted.offset - from) / size, (wanted.end - from) / size));
            else wanted.resolve(bytes.subarray(wanted.offset - from, wanted.end - from));
          }
        },
        (error: unknown) => {
          for (const wanted of members) wanted.reject(error);
        },
      );
    };
    for (const wanted of batch) {
      const joins =
        group.length > 0 && wanted.offset <= end + MERGE_GAP_BYTES && wanted.end - start <= MAX_MERGED_BYTES;
      if (!joins) {
        if (group.length > 0) send();
        group = [];
        start = wanted.offset;
        end = wanted.end;
      }
      group.push(wanted);
      end = Math.max(end, wanted.end);
    }
    if (group.length > 0) send();
  }

  async #send(offset: number, length: number | undefined): Promise<Buffer> {
    this.#statistics.requests++;
    const bytes = await this.#fetch(offset, length);
    this.#statistics.bytes += bytes.byteLength;
    return bytes;
  }

  /** The parts written into the block cache's slots; those of a read that failed go back. */
  async #sendParts(
    offset: number,
    length: number,
    partBytes: number,
    arrived: (index: number, part: Buffer) => void,
  ): Promise<Buffer[]> {
    this.#statistics.requests++;
    const blocks = this.#blocks as BlockCache;
    const taken: Buffer[] = [];
    const allocate = (bytes: number) => {
      const part = blocks.allocate(bytes);
      taken.push(part);
      return part;
    };
    let came = 0;
    const counted = (index: number, part: Buffer) => {
      came = index + 1;
      arrived(index, part);
    };
    try {
      const parts = await (this.#fetchParts as RangePartsFetch)(offset, length, partBytes, counted, allocate);
      for (const part of parts) this.#statistics.bytes += part.byteLength;
      return parts;
    } catch (error) {
      // Parts handed on are the cache's now; the rest never held a block.
      for (const part of taken.slice(came)) blocks.release(part);
      throw error;
    }
  }
}

const EMPTY = Buffer.alloc(0);

/** A fetched range as one buffer (parts joined: only where a store answered in blocks). */
function whole(bytes: Fetched): Buffer {
  return Array.isArray(bytes) ? Buffer.concat(bytes) : bytes;
}
