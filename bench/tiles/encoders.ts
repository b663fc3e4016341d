/**
 * nadir's tile encoder (src/tiles/encode.ts: the tile-codec addon) against sharp, which encoded
 * tiles before, at the same settings, and against the settings nadir chose not to use, on the
 * composite tiles themselves: one encode at a time in this process, so the figure is the cost of
 * one tile on one pool thread, the unit that bounds a process's composite rate. sharp's figure
 * includes its pipeline set-up on the event loop, which nadir paid for every tile.
 */
import sharp from 'sharp';
import { TILE_SIZE } from '../../src/geo/web-mercator.js';
import type * as EncodeModule from '../../src/tiles/encode.js';
import type * as CodecModule from '../../src/tiles/tile-codec.js';
import type { PngCompression, PngFilter } from '../../src/tiles/tile-codec.js';
import { importCompiled } from '../load/compiled.js';
import { spreadOf } from './measure.js';

export interface EncoderResult {
  format: 'jpeg' | 'png';
  /** Absent in results from before the addon, which measured sharp alone. */
  encoder?: 'tile-codec' | 'sharp';
  setting: string;
  /** What nadir uses. */
  nadir: boolean;
  msPerTile: number;
  bytesPerTile: number;
}

type Encode = (rgba: Buffer) => Promise<Buffer>;

type Variant = Omit<EncoderResult, 'msPerTile' | 'bytesPerTile'> & { encode: Encode };

const raw = (rgba: Buffer) => sharp(rgba, { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } }).removeAlpha();
/** Every encoder and setting compared; nadir's own encoders from dist/, as the server runs them. */
async function variants(): Promise<Variant[]> {
  const { encodeTile } = await importCompiled<typeof EncodeModule>('tiles/encode.js');
  const { encodeJpeg, encodePng } = await importCompiled<typeof CodecModule>('tiles/tile-codec.js');
  const png =
    (compression: PngCompression, filter: PngFilter): Encode =>
    (rgba) =>
      encodePng(rgba, TILE_SIZE, false, compression, 0, filter);
  return [
    {
      format: 'jpeg',
      encoder: 'tile-codec',
      setting: 'quality 85',
      nadir: true,
      encode: (rgba) => encodeTile(rgba, true, 'jpeg', 0),
    },
    {
      format: 'jpeg',
      encoder: 'sharp',
      setting: 'quality 85',
      nadir: false,
      encode: (rgba) => raw(rgba).jpeg({ quality: 85, optimiseCoding: false }).toBuffer(),
    },
    {
      format: 'jpeg',
      encoder: 'sharp',
      setting: 'quality 85, Huffman optimised',
      nadir: false,
      encode: (rgba) => raw(rgba).jpeg({ quality: 85, optimiseCoding: true }).toBuffer(),
    },
    {
      format: 'jpeg',
      encoder: 'tile-codec',
      setting: 'quality 90',
      nadir: false,
      encode: (rgba) => encodeJpeg(rgba, TILE_SIZE, 90, 0),
    },
    {
      format: 'png',
      encoder: 'tile-codec',
      setting: 'runs, Paeth filter',
      nadir: true,
      encode: (rgba) => encodeTile(rgba, true, 'png', 0),
    },
    { format: 'png', encoder: 'tile-codec', setting: 'runs, up filter', nadir: false, encode: png('runs', 'up') },
    { format: 'png', encoder: 'tile-codec', setting: 'zlib level 1, up filter', nadir: false, encode: png(1, 'up') },
    {
      format: 'png',
      encoder: 'tile-codec',
      setting: 'zlib level 1, Paeth filter',
      nadir: false,
      encode: png(1, 'paeth'),
    },
    { format: 'png', encoder: 'tile-codec', setting: 'zlib level 1, no filter', nadir: false, encode: png(1, 'none') },
    { format: 'png', encoder: 'tile-codec', setting: 'zlib level 1, sub filter', nadir: false, encode: png(1, 'sub') },
    {
      format: 'png',
      encoder: 'sharp',
      setting: 'zlib level 1, no filter',
      nadir: false,
      encode: (rgba) => raw(rgba).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer(),
    },
    { format: 'png', encoder: 'tile-codec', setting: 'zlib level 2, up filter', nadir: false, encode: png(2, 'up') },
    { format: 'png', encoder: 'tile-codec', setting: 'zlib level 6, up filter', nadir: false, encode: png(6, 'up') },
    {
      format: 'png',
      encoder: 'sharp',
      setting: 'zlib level 1, adaptive filtering',
      nadir: false,
      encode: (rgba) => raw(rgba).png({ compressionLevel: 1, adaptiveFiltering: true }).toBuffer(),
    },
  ];
}

/** RGBA pixels of tiles (decoded from nadir's PNG answers). */
export async function decodeTiles(pngs: Buffer[]): Promise<Buffer[]> {
  return Promise.all(pngs.map((png) => sharp(png).ensureAlpha().raw().toBuffer()));
}

/** Each variant over every tile, `rounds` times in alternating order; medians of the per-round means. */
export async function measureEncoders(tiles: Buffer[], rounds: number): Promise<EncoderResult[]> {
  const list = await variants();
  const times = list.map(() => [] as number[]);
  const bytes = list.map(() => 0);
  // Untimed first pass: libvips' threads, its operation cache, the addon and the JIT warm for every variant alike.
  for (const variant of list) for (const tile of tiles.slice(0, 20)) await variant.encode(tile);
  for (let round = 0; round < rounds; round++) {
    const order = list.map((_, i) => i);
    if (round % 2) order.reverse();
    for (const i of order) {
      const variant = list[i] as Variant;
      let size = 0;
      const started = performance.now();
      for (const tile of tiles) size += (await variant.encode(tile)).length;
      (times[i] as number[]).push((performance.now() - started) / tiles.length);
      bytes[i] = size / tiles.length;
    }
  }
  return list.map(({ format, encoder, setting, nadir }, i) => ({
    format,
    encoder,
    setting,
    nadir,
    msPerTile: spreadOf(times[i] as number[])?.median ?? Number.NaN,
    bytesPerTile: bytes[i] as number,
  }));
}
