/**
 * Encoding a composited tile with the tile-codec addon (libjpeg-turbo, and for PNG its own deflate
 * encoder) rather than sharp, which bounded a process's composite rate: its pipeline set-up took
 * about 0.2 ms of the event loop per tile, and on 256 x 256 tiles the addon encodes JPEG four to
 * six times faster at the same settings (bench/tiles/encoders.ts). The event loop only hands over
 * RGBA: alpha is dropped and panorama tiles are turned as the encoder reads its rows.
 * Settings, measured on aerial tiles: Huffman optimisation costs 30-60% more time for 2-5% fewer
 * bytes. PNG: the Paeth filter and run_deflate.c's `runs` (one Huffman block, runs of a byte the
 * only matches) take about half the time of libdeflate's fastest level with the up filter, for
 * about 7% more bytes on full tiles, and far fewer where a tile is transparent. A PNG encode
 * took four times as long as a JPEG one with libdeflate and takes twice as long now.
 */
import { TILE_SIZE } from '../geo/web-mercator.js';
import type { Rotation } from './panorama.js';
import { encodeJpeg, encodePng, type Picture, type PngCompression, type PngFilter } from './tile-codec.js';

export const JPEG_QUALITY = 85;
const PNG_COMPRESSION: PngCompression = 'runs';
const PNG_FILTER: PngFilter = 'paeth';
/** Part of every ETag: changing how tiles are encoded must not let clients keep old ones. */
export const ENCODING_VERSION = `tile-codec-2/jpeg-q${JPEG_QUALITY}/png-${PNG_COMPRESSION}-${PNG_FILTER}`;

export type EncodedFormat = 'jpeg' | 'png';

export function contentTypeOf(format: EncodedFormat): 'image/jpeg' | 'image/png' {
  return format === 'jpeg' ? 'image/jpeg' : 'image/png';
}

/**
 * `picture` is 256 x 256 RGBA, or layers the encoder composites first (tile-codec.ts), transparent
 * black where nothing was drawn; `full` when no pixel is. `into`: where to write the bytes if they fit. `into`: where to write the bytes if they fit.
 * JPEG shows undrawn pixels black (it ignores alpha); PNG keeps them transparent (and has no alpha
 * when full). `rotation` turns the picture clockwise.
 */
export function encodeTile(
  picture: Picture,
  full: boolean,
  format: EncodedFormat,
  rotation: Rotation,
  into?: Buffer,
): Promise<Buffer> {
  return format === 'jpeg'
    ? encodeJpeg(picture, TILE_SIZE, JPEG_QUALITY, rotation, into)
    : encodePng(picture, TILE_SIZE, !full, PNG_COMPRESSION, rotation, PNG_FILTER, into);
}
