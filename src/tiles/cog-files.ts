/**
 * Open COGs, shared. Opening one costs a read of its header and IFDs plus its tile offset tables;
 * every later tile is then one pread. Concurrent requests for the same file share one open (the
 * promise is cached, not the result), and a bounded LRU closes what has not been used for a
 * while, once no read is still running on it.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Source, Tiff, type TiffImage, TiffTag } from '@cogeotiff/core';
import { LruCache } from '../cache/lru.js';

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
  readonly #handle: FileHandle;
  #users = 0;
  #retired = false;
  #closed = false;

  constructor(uri: string, handle: FileHandle, levels: CogLevel[]) {
    this.uri = uri;
    this.#handle = handle;
    this.levels = levels;
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
    void this.#handle.close().catch(() => {});
  }
}

function fileSource(uri: string, handle: FileHandle): Source {
  return {
    url: new URL(uri),
    async fetch(offset: number, length?: number): Promise<ArrayBuffer> {
      const size = length ?? (await handle.stat()).size - offset;
      const buffer = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(buffer, 0, size, offset);
      return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + bytesRead) as ArrayBuffer;
    },
  };
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

async function openCog(uri: string): Promise<OpenCog> {
  if (!uri.startsWith('file:')) throw new Error(`only file: URIs can be read, got ${uri}`);
  const handle = await open(fileURLToPath(uri), 'r');
  try {
    const tiff = await Tiff.create(fileSource(uri, handle));
    const levels = levelsOf(tiff);
    // Whole offset tables up front: afterwards a tile is exactly one read, never three.
    await Promise.all(
      levels.flatMap(({ image, mask }) =>
        [image, mask]
          .filter((ifd): ifd is TiffImage => ifd !== undefined)
          .flatMap((ifd) => [ifd.fetch(TiffTag.TileOffsets), ifd.fetch(TiffTag.TileByteCounts)]),
      ),
    );
    return new OpenCog(uri, handle, levels);
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

export class CogFiles {
  readonly #open: LruCache<Promise<OpenCog>>;

  constructor(maxOpen: number) {
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
      opening = openCog(uri);
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
