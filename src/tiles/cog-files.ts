/**
 * Open COGs, shared. Opening one costs a read of its header and IFDs plus one read of its tile
 * offset tables where they lie together (cog-offset-tables.ts); every later tile is then one read.
 * Concurrent requests for the same file share one open (the promise is cached, not the result),
 * and a bounded LRU closes what has not been used for a while, once no read is still running on it.
 * The bytes come through the storage's Source (storage.ts), the same above a folder or a bucket;
 * a read the storage fails becomes STORAGE_UNAVAILABLE (503), never a hung request.
 */
import { type Source, Tiff, type TiffImage, TiffTag } from '@cogeotiff/core';
import { LruCache } from '../cache/lru.js';
import { type IntoSource, readsInto, type SurveyStorage, storageUnavailable } from '../storage/storage.js';
import { loadOffsetTables } from './cog-offset-tables.js';

/** How much of a COG its first read fetches: its header, IFDs and, usually, its offset tables. */
const HEADER_READ_BYTES = 64 * 1024;

/** TIFF SubFileType bit 2: this IFD is a transparency mask (GDAL's internal mask). */
const SUBFILE_MASK = 4;

/** One level of a COG: its imagery IFD and, when the COG has an internal mask, the mask's. */
export interface CogLevel {
  image: TiffImage;
  mask: TiffImage | undefined;
}

export class OpenCog {
  readonly uri: string;
  /** Index 0 is full resolution, then each overview, as the planner numbers them. */
  readonly levels: CogLevel[];
  readonly #source: Source;
  #users = 0;
  #retired = false;
  #closed = false;

  constructor(uri: string, source: Source, levels: CogLevel[]) {
    this.uri = uri;
    this.#source = source;
    this.levels = levels;
  }

  /** `length` bytes of the file at `offset` (a view of what the source fetched, not a copy). */
  async read(offset: number, length: number): Promise<Uint8Array> {
    const bytes = await this.#source.fetch(offset, length);
    if (bytes.byteLength < length)
      throw new Error(`${this.uri}: ${length} bytes at ${offset} read as ${bytes.byteLength}`);
    return new Uint8Array(bytes, 0, length);
  }

  /**
   * Fills `into` with the file's bytes from `offset`: straight into it when the source can (local
   * files), else a copy of what `fetch` answers.
   */
  async readInto(offset: number, into: Uint8Array): Promise<void> {
    const source = this.#source;
    const length = into.byteLength;
    let read: number;
    if (readsInto(source)) read = await source.fetchInto(offset, into);
    else {
      const bytes = await source.fetch(offset, length);
      read = Math.min(bytes.byteLength, length);
      into.set(new Uint8Array(bytes, 0, read));
    }
    if (read < length) throw new Error(`${this.uri}: ${length} bytes at ${offset} read as ${read}`);
  }

  /** True once the handle is closed: a caller still holding this object must open the file again. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Runs `work` with the file guaranteed open, even if the cache retires it meanwhile. */
  async use<T>(work: (cog: OpenCog) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error(`${this.uri} is closed`);
    this.#users++;
    try {
      return await work(this);
    } finally {
      this.#users--;
      if (this.#retired && this.#users === 0) this.#close();
    }
  }

  retire(): void {
    this.#retired = true;
    if (this.#users === 0) this.#close();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.#source.close?.().catch(() => {});
  }
}

/** The storage's source of `location`, its failures turned into STORAGE_UNAVAILABLE. */
function failingAsUnavailable(location: string, source: Source): Source {
  const unavailable = (error: unknown) => {
    throw storageUnavailable(location, error);
  };
  const wrapped: Source = {
    url: source.url,
    fetch: (offset, length) => source.fetch(offset, length).catch(unavailable),
    close: () => source.close?.() ?? Promise.resolve(),
  };
  if (!readsInto(source)) return wrapped;
  const into: IntoSource = {
    ...wrapped,
    fetchInto: (offset, bytes) => source.fetchInto(offset, bytes).catch(unavailable),
  };
  return into;
}

function isMask(image: TiffImage): boolean {
  return ((image.value(TiffTag.SubFileType) ?? 0) & SUBFILE_MASK) !== 0;
}

/** Pairs each imagery IFD with the mask IFD of the same size (GDAL writes them in that order). */
function levelsOf(tiff: Tiff): CogLevel[] {
  const images = tiff.images.filter((image) => !isMask(image));
  const masks = tiff.images.filter(isMask);
  return images.map((image) => ({
    image,
    mask: masks.find((mask) => mask.size.width === image.size.width && mask.size.height === image.size.height),
  }));
}

async function openCog(storage: SurveyStorage, uri: string): Promise<OpenCog> {
  const source = failingAsUnavailable(uri, storage.source(uri));
  try {
    // A first read of 64 KiB rather than cogeotiff's 16: on object storage a request costs about
    // the same either way, and a shard COG's IFDs and offset tables (about 26 KiB) then all come in it.
    const tiff = await Tiff.create(source, { defaultReadSize: HEADER_READ_BYTES });
    // Whole offset tables up front, together: afterwards a tile is exactly one read, never three.
    await loadOffsetTables(tiff, source);
    return new OpenCog(uri, source, levelsOf(tiff));
  } catch (error) {
    await source.close?.().catch(() => {});
    throw error;
  }
}

export class CogFiles {
  readonly #open: LruCache<Promise<OpenCog>>;
  readonly #storage: SurveyStorage;

  constructor(storage: SurveyStorage, maxOpen: number) {
    this.#storage = storage;
    this.#open = new LruCache<Promise<OpenCog>>({
      maxEntries: maxOpen,
      onEvict: (_uri, opening) => {
        opening.then(
          (cog) => cog.retire(),
          () => {},
        );
      },
    });
  }

  /** Runs `work` on the open COG at `uri`. A failed open is not cached: the next request retries. */
  async with<T>(uri: string, work: (cog: OpenCog) => Promise<T>): Promise<T> {
    for (;;) {
      const cog = await this.#opened(uri);
      // Retired and closed while this caller awaited it (another file pushed it out): reopen.
      if (!cog.closed) return cog.use(work);
    }
  }

  #opened(uri: string): Promise<OpenCog> {
    let opening = this.#open.get(uri);
    if (opening === undefined) {
      opening = openCog(this.#storage, uri);
      this.#open.set(uri, opening);
      opening.catch(() => {
        if (this.#open.get(uri) === opening) this.#open.delete(uri);
      });
    }
    return opening;
  }

  get openCount(): number {
    return this.#open.size;
  }

  close(): void {
    this.#open.clear();
  }
}
