/**
 * The tile codec addon (native/tile-codec, built by scripts/setup.sh): JPEG decoding, compositing,
 * libjpeg-turbo and the PNG encoders called directly on the libuv pool. Loaded on first use, so modules that only
 * need encode.ts's constants (the ETag) do not need the binary.
 */
import { nativeAddon } from '../native/native-addon.js';
import type { Rotation } from './panorama.js';

/** PNG's filter applied to every row: none, sub (left neighbour), up (the row above) or paeth (the nearest of left, up and upper left). */
export type PngFilter = 'none' | 'sub' | 'up' | 'paeth';
const FILTER_TYPES: Record<PngFilter, number> = { none: 0, sub: 1, up: 2, paeth: 4 };

/**
 * How a PNG's rows are deflated: libdeflate at a zlib level (0..12), or `runs`, the addon's own
 * encoder (native/tile-codec/src/run_deflate.c: one Huffman block whose only matches are runs of a byte).
 */
export type PngCompression = number | 'runs';
const RUN_DEFLATE = -1;

/**
 * One layer of a stack: RGBA pixels, valid where `mask` (1 bit a pixel, most significant first)
 * says, or everywhere. A layer may come as `jpeg` bytes instead, which the addon decodes on its
 * thread: into `pixels` when given (a buffer the caller keeps, e.g. in a cache; its contents are
 * then written by the job), else straight onto the composite through the mask.
 */
export type PictureLayer = { pixels: Uint8Array; mask?: Uint8Array } | JpegLayer;
export interface JpegLayer {
  jpeg: Uint8Array;
  pixels?: Uint8Array;
  mask?: Uint8Array;
}

/**
 * What is encoded: size x size RGBA, or a stack of 1 to 16 layers, top first, composited by the
 * addon (the top layer wins wherever valid; transparent black where none is).
 */
export type Picture = Uint8Array | readonly PictureLayer[];
/** The most layers a Picture may stack (the addon's MAX_LAYERS). */
export const MAX_STACK_LAYERS = 16;

type AddonPicture = Uint8Array | (Uint8Array | undefined)[];
type AddonMasks = (Uint8Array | undefined)[] | undefined;
type AddonJpegs = (Uint8Array | undefined)[] | undefined;

/** The addon answers the length when the bytes fitted `into`, else a Buffer of them. */
type AddonResult = Promise<Buffer | number>;

interface Addon {
  encodeJpeg(
    rgba: AddonPicture,
    size: number,
    quality: number,
    rotation: Rotation,
    masks: AddonMasks,
    into: Uint8Array | undefined,
    jpegs: AddonJpegs,
  ): AddonResult;
  encodePng(
    rgba: AddonPicture,
    size: number,
    withAlpha: boolean,
    level: number,
    rotation: Rotation,
    filter: number | undefined,
    masks: AddonMasks,
    into: Uint8Array | undefined,
    jpegs: AddonJpegs,
  ): AddonResult;
  decodeJpeg(
    jpeg: Uint8Array,
    scale: number,
    size: number,
    mask: Uint8Array | undefined,
    into: Uint8Array | undefined,
  ): Promise<Buffer | undefined>;
  inflateZlib(bytes: Uint8Array, length: number): Buffer;
}

/** The encoded bytes: a view of `into` when they fitted there. */
async function bytesOf(result: AddonResult, into: Buffer | undefined): Promise<Buffer> {
  const answer = await result;
  return typeof answer === 'number' ? (into as Buffer).subarray(0, answer) : answer;
}

/** The addon's form of a picture: a buffer, or the layers' pixels, masks and JPEGs as three arrays. */
function split(picture: Picture): [AddonPicture, AddonMasks, AddonJpegs] {
  if (!Array.isArray(picture)) return [picture as Uint8Array, undefined, undefined];
  const layers = picture as readonly PictureLayer[];
  const jpegs = layers.some((layer) => 'jpeg' in layer)
    ? layers.map((layer) => ('jpeg' in layer ? layer.jpeg : undefined))
    : undefined;
  return [layers.map((layer) => layer.pixels), layers.map((layer) => layer.mask), jpegs];
}

const load = (): Addon => nativeAddon<Addon>('tile-codec');

/**
 * Baseline JPEG, YCbCr 4:2:0, standard Huffman tables, of `picture` (alpha ignored), whose buffers
 * must not change until the promise settles; `rotation` turns the picture clockwise. `into`: where to
 * write the bytes if they fit (the answer is then a view of it), so that a caller can reuse one
 * buffer for many tiles; a new Buffer otherwise. Bad arguments throw a TypeError or RangeError at once.
 */
export function encodeJpeg(
  picture: Picture,
  size: number,
  quality: number,
  rotation: Rotation,
  into?: Buffer,
): Promise<Buffer> {
  const [rgba, masks, jpegs] = split(picture);
  return bytesOf(load().encodeJpeg(rgba, size, quality, rotation, masks, into, jpegs), into);
}

/** 8-bit RGB PNG, or RGBA `withAlpha`, deflated as `compression` says; otherwise as encodeJpeg. */
export function encodePng(
  picture: Picture,
  size: number,
  withAlpha: boolean,
  compression: PngCompression,
  rotation: Rotation,
  filter?: PngFilter,
  into?: Buffer,
): Promise<Buffer> {
  // -1 is how the addon is told `runs`; as a number it would slip past the addon's range check.
  if (typeof compression === 'number' && compression < 0) throw new RangeError('a zlib level is 0 to 12');
  const level = compression === 'runs' ? RUN_DEFLATE : compression;
  // An unknown filter becomes NaN, which the addon refuses like any number out of range.
  const type = filter === undefined ? undefined : (FILTER_TYPES[filter] ?? Number.NaN);
  const [rgba, masks, jpegs] = split(picture);
  return bytesOf(load().encodePng(rgba, size, withAlpha, level, rotation, type, masks, into, jpegs), into);
}

/** The scaled decodes libjpeg-turbo does in its inverse DCT. */
export type DecodeScale = 1 | 2 | 4 | 8;

/**
 * Decodes a JPEG (1 or 3 components) on the libuv pool into `size` x `size` RGBA with alpha 255, at
 * 1/`scale` of its own size (which must then be `size`). Without `into`, the answer is a new Buffer;
 * with it, the pixels are painted into `into` (only where `mask`'s bits are set, when given: 1 bit
 * a pixel, most significant first) and the answer is undefined. Corrupt or truncated bytes reject
 * (libjpeg's warnings count as failures); bad arguments throw at once.
 */
export function decodeJpeg(jpeg: Uint8Array, scale: DecodeScale, size: number): Promise<Buffer>;
export function decodeJpeg(
  jpeg: Uint8Array,
  scale: DecodeScale,
  size: number,
  mask: Uint8Array | undefined,
  into: Uint8Array,
): Promise<undefined>;
export function decodeJpeg(
  jpeg: Uint8Array,
  scale: DecodeScale,
  size: number,
  mask?: Uint8Array,
  into?: Uint8Array,
): Promise<Buffer | undefined> {
  return load().decodeJpeg(jpeg, scale, size, mask, into);
}

/**
 * The zlib stream `bytes` inflated to exactly `length` bytes, synchronously (libdeflate: a few
 * microseconds for a mask tile, against about 30 for node:zlib's inflateSync). Throws when the
 * stream is corrupt or inflates to another length.
 */
export function inflateZlib(bytes: Uint8Array, length: number): Buffer {
  return load().inflateZlib(bytes, length);
}
