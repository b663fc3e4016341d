/**
 * Encoding a composited tile with sharp (libvips), which runs on the libuv thread pool, off the
 * event loop. The settings were chosen by measurement on 256 x 256 tiles (docs/benchmarks-tiles.md):
 * Huffman optimisation costs a quarter more time for a few percent of bytes, and PNG's zlib level
 * above 2 costs more time than it saves on the wire for aerial imagery.
 */
import sharp from 'sharp';
import { TILE_SIZE } from '../geo/web-mercator.js';
import type { TileCanvas } from './canvas.js';

export const JPEG_QUALITY = 85;
const PNG_COMPRESSION = 2;
/** Part of every ETag: changing how tiles are encoded must not let clients keep old ones. */
export const ENCODING_VERSION = `jpeg-q${JPEG_QUALITY}/png-z${PNG_COMPRESSION}`;

export type EncodedFormat = 'jpeg' | 'png';

export function contentTypeOf(format: EncodedFormat): 'image/jpeg' | 'image/png' {
  return format === 'jpeg' ? 'image/jpeg' : 'image/png';
}

/** JPEG shows undrawn pixels black; PNG makes them transparent (and drops alpha when none are). */
export async function encodeCanvas(canvas: TileCanvas, format: EncodedFormat): Promise<Buffer> {
  if (format === 'jpeg' || canvas.full) {
    const image = sharp(canvas.rgb, { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 3 } });
    return format === 'jpeg'
      ? image.jpeg({ quality: JPEG_QUALITY, optimiseCoding: false }).toBuffer()
      : image.png({ compressionLevel: PNG_COMPRESSION, adaptiveFiltering: false }).toBuffer();
  }
  return sharp(canvas.rgba(), { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } })
    .png({ compressionLevel: PNG_COMPRESSION, adaptiveFiltering: false })
    .toBuffer();
}
