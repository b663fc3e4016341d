/**
 * Reads single tiles of grid-aligned COGs: the JPEG bytes as stored (for pass-through), the
 * internal mask (1 bit per pixel), and the decoded RGB pixels. Masks and decoded pixels are cached
 * (bounded by entries and bytes): a map client asks for the same neighbourhood again and again, and
 * decoding a 256 x 256 JPEG costs about as much CPU as encoding one, the way GDAL's block cache
 * spares MapServer or a rasterio tiler from decoding a block twice.
 */
import { inflateSync } from 'node:zlib';
import type { TiffImage } from '@cogeotiff/core';
import sharp from 'sharp';
import { LruCache } from '../cache/lru.js';
import { TILE_SIZE } from '../geo/web-mercator.js';
import type { CogFiles } from './cog-files.js';
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

function classify(bits: Uint8Array): TileMask {
  let and = 0xff;
  let or = 0;
  for (let i = 0; i < MASK_BYTES; i++) {
    const byte = bits[i] as number;
    and &= byte;
    or |= byte;
  }
  if (and === 0xff) return FULL;
  if (or === 0) return EMPTY;
  return { kind: 'partial', bits };
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
    this.#pixels = new LruCache<Buffer>({
      maxEntries: Math.max(1, Math.floor(options.pixelCacheBytes / RGBA_BYTES)),
      maxWeight: Math.max(RGBA_BYTES, options.pixelCacheBytes),
      weigh: (pixels) => pixels.byteLength,
    });
  }

  /** The stored JPEG of the tile, with the COG's JPEG tables merged in; undefined when sparse. */
  async jpeg(address: CogTileAddress): Promise<Buffer | undefined> {
    const key = keyOf(address);
    const cached = this.#jpegs.get(key);
    if (cached) return cached;
    const jpeg = await this.#files.with(address.uri, async (cog) => {
      const image = levelImage(cog.levels[address.level]?.image, address);
      const tile = await image.getTile(address.col, address.row);
      return tile ? Buffer.from(tile.bytes) : undefined;
    });
    if (jpeg) this.#jpegs.set(key, jpeg);
    return jpeg;
  }

  async mask(address: CogTileAddress): Promise<TileMask> {
    const key = keyOf(address);
    const cached = this.#masks.get(key);
    if (cached) return cached;
    const mask = await this.#files.with(address.uri, async (cog) => {
      const level = cog.levels[address.level];
      const image = levelImage(level?.image, address);
      // Without a mask every stored tile is whole; a sparse (absent) tile has no pixels either way.
      if (!level?.mask) return (await image.hasTile(address.col, address.row)) ? FULL : EMPTY;
      const tile = await level.mask.getTile(address.col, address.row);
      if (!tile) return EMPTY;
      return classify(unpackMask(Buffer.from(tile.bytes), tile.compression as number));
    });
    this.#masks.set(key, mask);
    return mask;
  }

  /** Decoded RGBA with alpha 255 (the compositor moves 32-bit words), 256 KiB; undefined for a sparse tile. */
  async pixels(address: CogTileAddress): Promise<Buffer | undefined> {
    const key = keyOf(address);
    const cached = this.#pixels.get(key);
    if (cached) return cached;
    let decoding = this.#decoding.get(key);
    if (!decoding) {
      decoding = this.#decode(address).finally(() => this.#decoding.delete(key));
      this.#decoding.set(key, decoding);
    }
    const pixels = await decoding;
    if (pixels) this.#pixels.set(key, pixels);
    return pixels;
  }

  async #decode(address: CogTileAddress): Promise<Buffer | undefined> {
    const jpeg = await this.jpeg(address);
    if (!jpeg) return undefined;
    const { data, info } = await this.#gate.run(() =>
      sharp(jpeg).ensureAlpha().raw().toBuffer({ resolveWithObject: true }),
    );
    if (info.width !== TILE_SIZE || info.height !== TILE_SIZE || info.channels !== 4) {
      throw new Error(
        `${address.uri} level ${address.level} tile ${address.col},${address.row} decodes to ${info.width}x${info.height}x${info.channels}, not 256x256 RGBA`,
      );
    }
    return data;
  }
}

function levelImage(image: TiffImage | undefined, address: CogTileAddress): TiffImage {
  if (!image) throw new Error(`${address.uri} has no overview level ${address.level}`);
  return image;
}

function unpackMask(bytes: Buffer, compression: number): Uint8Array {
  let bits: Uint8Array;
  if (compression === COMPRESSION_DEFLATE || compression === COMPRESSION_ADOBE_DEFLATE) bits = inflateSync(bytes);
  else if (compression === COMPRESSION_NONE) bits = bytes;
  else throw new Error(`unsupported mask compression ${compression}`);
  if (bits.byteLength < MASK_BYTES) throw new Error(`mask tile holds ${bits.byteLength} bytes, expected ${MASK_BYTES}`);
  return bits.subarray(0, MASK_BYTES);
}
