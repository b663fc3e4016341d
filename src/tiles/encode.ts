/**
 * Encoding a composited tile with the tile-codec addon (libjpeg-turbo and libdeflate on the libuv
 * pool) rather than sharp, which bounded a process's composite rate: its pipeline set-up took about
 * 0.2 ms of the event loop per tile, and on 256 x 256 tiles the addon encodes JPEG four to six times
 * and PNG about twice as fast at the same settings (bench/tiles/encoders.ts). The event loop only
 * hands over RGBA: alpha is dropped and panorama tiles are turned as the encoder reads its rows.
 * Settings, measured on aerial tiles: Huffman optimisation costs 30-60% more time for 2-5% fewer
 * bytes; zlib level 2 costs 45-70% more time than level 1 for 1-6% fewer bytes; PNG's up filter
 * makes tiles 4-21% smaller than no filter for about the same time (deflate has less to do), and
 * sub is no smaller and slower.
 */
import { TILE_SIZE } from '../geo/web-mercator.js';
import type { Rotation } from './panorama.js';
import { encodeJpeg, encodePng, type PngFilter } from './tile-codec.js';

export const JPEG_QUALITY = 85;
const PNG_LEVEL = 1;
const PNG_FILTER: PngFilter = 'up';
/** Part of every ETag: changing how tiles are encoded must not let clients keep old ones. */
export const ENCODING_VERSION = `tile-codec-1/jpeg-q${JPEG_QUALITY}/png-z${PNG_LEVEL}-${PNG_FILTER}`;

export type EncodedFormat = 'jpeg' | 'png';

export function contentTypeOf(format: EncodedFormat): 'image/jpeg' | 'image/png' {
  return format === 'jpeg' ? 'image/jpeg' : 'image/png';
}

/**
 * `rgba` is 256 x 256 RGBA, transparent black where nothing was drawn; `full` when no pixel is.
 * JPEG shows undrawn pixels black (it ignores alpha); PNG keeps them transparent (and has no alpha
 * when full). `rotation` turns the picture clockwise.
 */
export function encodeTile(rgba: Buffer, full: boolean, format: EncodedFormat, rotation: Rotation): Promise<Buffer> {
  return format === 'jpeg'
    ? encodeJpeg(rgba, TILE_SIZE, JPEG_QUALITY, rotation)
    : encodePng(rgba, TILE_SIZE, !full, PNG_LEVEL, rotation, PNG_FILTER);
}
