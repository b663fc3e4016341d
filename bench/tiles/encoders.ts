/**
 * nadir's tile encoder (src/tiles/encode.ts) against the settings it chose not to use, on the
 * composite tiles themselves: one encode at a time in this process, so the figure is the cost of
 * one tile on one libvips thread, the unit that bounds a process's composite rate.
 */
import sharp from 'sharp';
import { TILE_SIZE } from '../../src/geo/web-mercator.js';
import { encodeTile } from '../../src/tiles/encode.js';
import { spreadOf } from './measure.js';

export interface EncoderResult {
  format: 'jpeg' | 'png';
  setting: string;
  /** What nadir uses. */
  nadir: boolean;
  msPerTile: number;
  bytesPerTile: number;
}

type Encode = (rgba: Buffer) => Promise<Buffer>;

const raw = (rgba: Buffer) => sharp(rgba, { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } }).removeAlpha();

const VARIANTS: { format: 'jpeg' | 'png'; setting: string; nadir: boolean; encode: Encode }[] = [
  { format: 'jpeg', setting: 'quality 85', nadir: true, encode: (rgba) => encodeTile(rgba, true, 'jpeg', 0) },
  {
    format: 'jpeg',
    setting: 'quality 85, Huffman optimised',
    nadir: false,
    encode: (rgba) => raw(rgba).jpeg({ quality: 85, optimiseCoding: true }).toBuffer(),
  },
  {
    format: 'jpeg',
    setting: 'quality 90',
    nadir: false,
    encode: (rgba) => raw(rgba).jpeg({ quality: 90, optimiseCoding: false }).toBuffer(),
  },
  {
    format: 'png',
    setting: 'zlib level 1, no filter',
    nadir: true,
    encode: (rgba) => encodeTile(rgba, true, 'png', 0),
  },
  {
    format: 'png',
    setting: 'zlib level 2, no filter',
    nadir: false,
    encode: (rgba) => raw(rgba).png({ compressionLevel: 2, adaptiveFiltering: false }).toBuffer(),
  },
  {
    format: 'png',
    setting: 'zlib level 6 (sharp default), no filter',
    nadir: false,
    encode: (rgba) => raw(rgba).png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer(),
  },
  {
    format: 'png',
    setting: 'zlib level 1, adaptive filtering',
    nadir: false,
    encode: (rgba) => raw(rgba).png({ compressionLevel: 1, adaptiveFiltering: true }).toBuffer(),
  },
];

/** RGBA pixels of tiles (decoded from nadir's PNG answers). */
export async function decodeTiles(pngs: Buffer[]): Promise<Buffer[]> {
  return Promise.all(pngs.map((png) => sharp(png).ensureAlpha().raw().toBuffer()));
}

/** Each variant over every tile, `rounds` times in alternating order; medians of the per-round means. */
export async function measureEncoders(tiles: Buffer[], rounds: number): Promise<EncoderResult[]> {
  const times = VARIANTS.map(() => [] as number[]);
  const bytes = VARIANTS.map(() => 0);
  // Untimed first pass: libvips' threads, its operation cache and the JIT warm for every variant alike.
  for (const variant of VARIANTS) for (const tile of tiles.slice(0, 20)) await variant.encode(tile);
  for (let round = 0; round < rounds; round++) {
    const order = VARIANTS.map((_, i) => i);
    if (round % 2) order.reverse();
    for (const i of order) {
      const variant = VARIANTS[i] as (typeof VARIANTS)[number];
      let size = 0;
      const started = performance.now();
      for (const tile of tiles) size += (await variant.encode(tile)).length;
      (times[i] as number[]).push((performance.now() - started) / tiles.length);
      bytes[i] = size / tiles.length;
    }
  }
  return VARIANTS.map(({ format, setting, nadir }, i) => ({
    format,
    setting,
    nadir,
    msPerTile: spreadOf(times[i] as number[])?.median ?? Number.NaN,
    bytesPerTile: bytes[i] as number,
  }));
}
