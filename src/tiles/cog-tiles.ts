/**
 * Reads single tiles of grid-aligned COGs: the JPEG bytes as stored (for pass-through), the
 * internal mask (1 bit per pixel), and the decoded RGB pixels. Masks, stored JPEGs and decoded
 * pixels are cached (bounded by entries and bytes): a map client asks for the same neighbourhood
 * again and again, and decoding a 256 x 256 JPEG costs about as much CPU as encoding one, the way
 * GDAL's block cache spares MapServer or a rasterio tiler from decoding a block twice. A tile is
 * cached from its second request on (doorkeeper.ts): most tiles an origin draws are asked for once.
 * Decodes run in the tile-codec addon (libjpeg-turbo on the libuv pool): sharp's pipeline took
 * 1.5 ms of CPU per tile, the addon 0.25 ms.
 */
import { type TiffImage, TiffTag } from '@cogeotiff/core';
import { Doorkeeper } from '../cache/doorkeeper.js';
import { type CacheStats, LruCache } from '../cache/lru.js';
import { TILE_SIZE } from '../geo/web-mercator.js';
import type { CogFiles } from './cog-files.js';
import { readsImagery, StoredTileReader } from './cog-tile-read.js';
import { decodeJpeg, inflateZlib } from './tile-codec.js';
import type { WorkGate } from './work-gate.js';

export const TILE_PIXELS = TILE_SIZE * TILE_SIZE;
/** One mask row, packed 8 pixels a byte, most significant bit first (TIFF FillOrder 1). */
const MASK_ROW_BYTES = TILE_SIZE / 8;
const MASK_BYTES = MASK_ROW_BYTES * TILE_SIZE;
const RGBA_BYTES = TILE_PIXELS * 4;
/** TIFF Compression tag values a GDAL mask may use. */
const COMPRESSION_NONE = 1;
const COMPRESSION_DEFLATE = 8;
const COMPRESSION_ADOBE_DEFLATE = 32946;

/** Which pixels of one COG tile hold imagery. `bits` as stored: 32 bytes a row, MSB first. */
export type TileMask = { kind: 'full' } | { kind: 'empty' } | { kind: 'partial'; bits: Uint8Array };

/** A tile's mask, and its stored JPEG when the read that found the mask brought it too. */
export interface MaskedTile {
  mask: TileMask;
  /** For this request to draw or send: the JPEG is cached only from the tile's second read. */
  jpeg?: Buffer;
}

const FULL: TileMask = { kind: 'full' };
const EMPTY: TileMask = { kind: 'empty' };

export interface CogTileAddress {
  uri: string;
  level: number;
  col: number;
  row: number;
}

export function maskBit(bits: Uint8Array, index: number): number {
  return ((bits[index >> 3] as number) >> (7 - (index & 7))) & 1;
}

/**
 * Full when every byte is 0xff, empty when every byte is 0, else partial. The compares all come
 * before the loop or inside it: V8 compiles the loop while the first call is still in it (on-stack
 * replacement), and a compare after the loop would have no type feedback yet. With the old form
 * (AND and OR over the bytes, compared afterwards) every call then left the compiled loop at that
 * compare, 400 deoptimizations in the first 800 cold tiles, and it took 16% of a cold tile
 * server's main thread.
 */
export function classifyMask(bits: Uint8Array): TileMask {
  const first = bits[0] as number;
  const uniform = first === 0xff ? FULL : first === 0 ? EMPTY : undefined;
  if (uniform === undefined) return { kind: 'partial', bits };
  for (let i = 1; i < MASK_BYTES; i++) {
    if (bits[i] !== first) return { kind: 'partial', bits };
  }
  return uniform;
}

function keyOf({ uri, level, col, row }: CogTileAddress): string {
  return `${uri}#${level}/${col}/${row}`;
}

export interface CogTilesOptions {
  /** Decoded RGBA tiles kept, in bytes (each is 256 KiB). */
  pixelCacheBytes: number;
  /** Stored JPEG tiles kept, in bytes: a pass-through tile is then answered with no I/O at all. */
  jpegCacheBytes: number;
  /** Masks kept, and the bytes they may hold (a partial one is 8 KiB, full and empty ones almost nothing). */
  maskCacheEntries: number;
  maskCacheBytes: number;
  /** Where JPEG decodes wait for a core. */
  gate: WorkGate;
}

export class CogTiles {
  readonly #files: CogFiles;
  readonly #gate: WorkGate;
  readonly #masks: LruCache<TileMask>;
  readonly #pixels: LruCache<Buffer>;
  readonly #jpegs: LruCache<Buffer>;
  /** Decodes under way, so concurrent requests for one tile decode it once. */
  readonly #decoding = new Map<string, Promise<Buffer | undefined>>();
  readonly #stored = new StoredTileReader();
  /** Stored tiles read recently: a partial mask or a JPEG is kept from its tile's second read. */
  readonly #storedSeen: Doorkeeper;
  /** Tiles decoded recently (see keepBuffer); undefined when no decoded tile is kept at all. */
  readonly #pixelsSeen: Doorkeeper | undefined;

  constructor(files: CogFiles, options: CogTilesOptions) {
    this.#files = files;
    this.#gate = options.gate;
    // Entries bound the full and empty masks (shared constants), bytes the partial ones (8 KiB).
    this.#masks = new LruCache<TileMask>({
      maxEntries: options.maskCacheEntries,
      maxWeight: options.maskCacheBytes,
      weigh: (mask) => (mask.kind === 'partial' ? MASK_BYTES : 64),
    });
    this.#jpegs = new LruCache<Buffer>({
      maxEntries: Math.max(1, Math.floor(options.jpegCacheBytes / 4096)),
      maxWeight: Math.max(1, options.jpegCacheBytes),
      weigh: (jpeg) => jpeg.byteLength,
    });
    // Four times the tiles the JPEG cache holds at 16 KiB each, and the partial masks the mask cache holds.
    this.#storedSeen = new Doorkeeper(
      4 * Math.max(options.jpegCacheBytes / (16 * 1024), options.maskCacheBytes / MASK_BYTES),
    );
    const pixelEntries = Math.floor(options.pixelCacheBytes / RGBA_BYTES);
    this.#pixels = new LruCache<Buffer>({
      maxEntries: Math.max(1, pixelEntries),
      maxWeight: Math.max(RGBA_BYTES, options.pixelCacheBytes),
      weigh: (pixels) => pixels.byteLength,
    });
    // Remembering four times as many keys as pixels kept: a tile asked for again while the cache
    // would still hold it is worth keeping.
    if (pixelEntries > 0) this.#pixelsSeen = new Doorkeeper(4 * pixelEntries);
  }

  /** The stored-JPEG and decoded-pixel caches' figures, for metrics. */
  get cacheStats(): { jpeg: CacheStats; pixels: CacheStats } {
    return { jpeg: this.#jpegs.stats, pixels: this.#pixels.stats };
  }

  /** The decoded tile if it is cached: no I/O, no decode. */
  cachedPixels(address: CogTileAddress): Buffer | undefined {
    return this.#pixels.get(keyOf(address));
  }

  /** Another request's decode of the tile, under way: share it rather than decode the tile twice. */
  pendingPixels(address: CogTileAddress): Promise<Buffer | undefined> | undefined {
    return this.#decoding.get(keyOf(address));
  }

  /**
   * A buffer to decode the tile into and keep (then `keep` it), or undefined to decode it straight
   * onto a composite and forget it. A tile is kept when it is asked for a second time while it
   * would still be cached: a CDN's origin, or a map panning over new ground, sees most tiles once,
   * and keeping each of those meant allocating 256 KiB per decode and evicting tiles that were
   * asked for again.
   */
  keepBuffer(address: CogTileAddress): Buffer | undefined {
    return this.#pixelsSeen?.secondSighting(keyOf(address)) ? Buffer.allocUnsafeSlow(RGBA_BYTES) : undefined;
  }

  /** Keeps a tile decoded into a keepBuffer. */
  keep(address: CogTileAddress, pixels: Buffer): void {
    this.#pixels.set(keyOf(address), pixels);
  }

  /** The stored JPEG of the tile, with the COG's JPEG tables merged in; undefined when sparse. */
  async jpeg(address: CogTileAddress): Promise<Buffer | undefined> {
    const key = keyOf(address);
    const cached = this.#jpegs.get(key);
    if (cached) return cached;
    const jpeg = await this.#files.with(address.uri, async (cog) => {
      const level = cog.levels[address.level];
      const image = levelImage(level?.image, address);
      if (level && readsImagery(level))
        return (await this.#stored.read(cog, level, address.col, address.row, false)).jpeg;
      const tile = await image.getTile(address.col, address.row);
      return tile ? Buffer.from(tile.bytes) : undefined;
    });
    if (jpeg && this.#storedSeen.secondSighting(key)) this.#jpegs.set(key, jpeg);
    return jpeg;
  }

  /** The tile's mask, with its stored JPEG when one read brought both (pass it on: it may not be cached). */
  async masked(address: CogTileAddress): Promise<MaskedTile> {
    const key = keyOf(address);
    const cached = this.#masks.get(key);
    if (cached) return { mask: cached };
    return this.#files.with(address.uri, async (cog) => {
      const level = cog.levels[address.level];
      const image = levelImage(level?.image, address);
      // Without a mask every stored tile is whole; a sparse (absent) tile has no pixels either way.
      if (!level?.mask) {
        const mask = (await image.hasTile(address.col, address.row)) ? FULL : EMPTY;
        this.#masks.set(key, mask);
        return { mask };
      }
      const compression = level.mask.value(TiffTag.Compression) as number;
      // The imagery comes with the mask in the same read (GDAL writes them side by side): whoever
      // asked for the mask draws or sends the imagery next, unless a layer above covers it all.
      if (readsImagery(level) && !this.#jpegs.has(key)) {
        const stored = await this.#stored.read(cog, level, address.col, address.row, true);
        const mask = stored.mask ? classifyMask(unpackMask(stored.mask, compression)) : EMPTY;
        const again = this.#storedSeen.secondSighting(key);
        if (again || mask.kind !== 'partial') this.#masks.set(key, mask);
        if (again && stored.jpeg) this.#jpegs.set(key, stored.jpeg);
        return { mask, jpeg: stored.jpeg };
      }
      const tile = await level.mask.getTile(address.col, address.row);
      const mask = tile ? classifyMask(unpackMask(new Uint8Array(tile.bytes), compression)) : EMPTY;
      // The JPEG is cached (so asked for twice already) or read on its own next, counting the sighting.
      if (mask.kind !== 'partial' || this.#jpegs.has(key) || this.#storedSeen.seen(key)) this.#masks.set(key, mask);
      return { mask };
    });
  }

  /**
   * Decoded RGBA with alpha 255 (the compositor moves 32-bit words), 256 KiB; undefined for a
   * sparse tile. `jpeg`: the stored tile if the caller has it already (masked()).
   */
  async pixels(address: CogTileAddress, jpeg?: Buffer): Promise<Buffer | undefined> {
    const key = keyOf(address);
    const cached = this.#pixels.get(key);
    if (cached) return cached;
    let decoding = this.#decoding.get(key);
    if (!decoding) {
      decoding = this.#decode(address, jpeg).finally(() => this.#decoding.delete(key));
      this.#decoding.set(key, decoding);
    }
    const pixels = await decoding;
    if (pixels && this.#pixelsSeen?.secondSighting(key)) this.#pixels.set(key, pixels);
    return pixels;
  }

  async #decode(address: CogTileAddress, stored: Buffer | undefined): Promise<Buffer | undefined> {
    const jpeg = stored ?? (await this.jpeg(address));
    if (!jpeg) return undefined;
    try {
      return await this.#gate.run(() => decodeJpeg(jpeg, 1, TILE_SIZE));
    } catch (error) {
      throw new Error(
        `${address.uri} level ${address.level} tile ${address.col},${address.row}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
}

function levelImage(image: TiffImage | undefined, address: CogTileAddress): TiffImage {
  if (!image) throw new Error(`${address.uri} has no overview level ${address.level}`);
  return image;
}

function unpackMask(bytes: Uint8Array, compression: number): Uint8Array {
  let bits: Uint8Array;
  if (compression === COMPRESSION_DEFLATE || compression === COMPRESSION_ADOBE_DEFLATE)
    bits = inflateZlib(bytes, MASK_BYTES);
  else if (compression === COMPRESSION_NONE) bits = bytes;
  else throw new Error(`unsupported mask compression ${compression}`);
  if (bits.byteLength < MASK_BYTES) throw new Error(`mask tile holds ${bits.byteLength} bytes, expected ${MASK_BYTES}`);
  return bits.subarray(0, MASK_BYTES);
}
