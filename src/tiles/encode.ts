/**
 * Encoding a composited tile with sharp (libvips), on the libuv thread pool. The event loop only
 * hands over RGBA: dropping alpha for JPEG (or for a full PNG) and turning panorama tiles happen
 * inside the libvips pipeline, off the loop, which is what bounds a single process's tile rate.
 * Settings measured on 256 x 256 tiles (docs/benchmarks-tiles.md): Huffman optimisation costs a
 * quarter more time for a few percent of bytes; PNG zlib level 1 is a fifth faster than level 2.
 */
import sharp from 'sharp';
import { TILE_SIZE } from '../geo/web-mercator.js';
import type { Rotation } from './panorama.js';

export const JPEG_QUALITY = 85;
const PNG_COMPRESSION = 1;
/** Part of every ETag: changing how tiles are encoded must not let clients keep old ones. */
export const ENCODING_VERSION = `jpeg-q${JPEG_QUALITY}/png-z${PNG_COMPRESSION}`;

export type EncodedFormat = 'jpeg' | 'png';

export function contentTypeOf(format: EncodedFormat): 'image/jpeg' | 'image/png' {
  return format === 'jpeg' ? 'image/jpeg' : 'image/png';
}

/**
 * `rgba` is 256 x 256 RGBA, transparent black where nothing was drawn; `full` when no pixel is.
 * JPEG shows undrawn pixels black; PNG keeps them transparent (and has no alpha when full).
 * `rotation` turns the picture clockwise.
 */
export function encodeTile(rgba: Buffer, full: boolean, format: EncodedFormat, rotation: Rotation): Promise<Buffer> {
  let image = sharp(rgba, { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } });
  if (format === 'jpeg' || full) image = image.removeAlpha();
  if (rotation !== 0) image = image.rotate(rotation);
  return format === 'jpeg'
    ? image.jpeg({ quality: JPEG_QUALITY, optimiseCoding: false }).toBuffer()
    : image.png({ compressionLevel: PNG_COMPRESSION, adaptiveFiltering: false }).toBuffer();
}
