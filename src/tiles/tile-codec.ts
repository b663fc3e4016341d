/**
 * The tile encoder addon (native/tile-codec, built by scripts/setup.sh): compositing, libjpeg-turbo
 * and the PNG encoders called directly on the libuv pool. Loaded on first use, so modules that only
 * need encode.ts's constants (the ETag) do not need the binary.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
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

/** One layer of a stack: RGBA pixels, valid where `mask` (1 bit a pixel, most significant first) says, or everywhere. */
export interface PictureLayer {
  pixels: Uint8Array;
  mask?: Uint8Array;
}

/**
 * What is encoded: size x size RGBA, or a stack of 1 to 16 layers, top first, composited by the
 * addon (the top layer wins wherever valid; transparent black where none is).
 */
export type Picture = Uint8Array | readonly PictureLayer[];
/** The most layers a Picture may stack (the addon's MAX_LAYERS). */
export const MAX_STACK_LAYERS = 16;

type AddonPicture = Uint8Array | Uint8Array[];
type AddonMasks = (Uint8Array | undefined)[] | undefined;

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
  ): AddonResult;
}

/** The encoded bytes: a view of `into` when they fitted there. */
async function bytesOf(result: AddonResult, into: Buffer | undefined): Promise<Buffer> {
  const answer = await result;
  return typeof answer === 'number' ? (into as Buffer).subarray(0, answer) : answer;
}

/** The addon's form of a picture: a buffer, or the layers' pixels and masks as two arrays. */
function split(picture: Picture): [AddonPicture, AddonMasks] {
  if (!Array.isArray(picture)) return [picture as Uint8Array, undefined];
  return [picture.map((layer) => layer.pixels), picture.map((layer) => layer.mask)];
}

// Two levels below the package root both as src/tiles/*.ts (tsx) and as dist/tiles/*.js (tsc).
const ADDON_PATH = fileURLToPath(new URL('../../native/tile-codec/build/Release/tile_codec.node', import.meta.url));
let addon: Addon | undefined;

function load(): Addon {
  if (!addon) {
    try {
      addon = createRequire(import.meta.url)(ADDON_PATH) as Addon;
    } catch (error) {
      throw new Error(
        `the tile encoder addon ${ADDON_PATH} cannot be loaded (${(error as Error).message.split('\n')[0]}); ` +
          'run scripts/setup.sh to build it',
        { cause: error },
      );
    }
  }
  return addon;
}

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
  const [rgba, masks] = split(picture);
  return bytesOf(load().encodeJpeg(rgba, size, quality, rotation, masks, into), into);
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
  const [rgba, masks] = split(picture);
  return bytesOf(load().encodePng(rgba, size, withAlpha, level, rotation, type, masks, into), into);
}
