/**
 * Compositing for the common case, where every layer is one whole COG tile drawn 1:1 (any zoom
 * within the surveys' own zoom ranges). Two steps, both cheap on the event loop:
 *
 * 1. `chooseLayers` reads only the masks: which layers add pixels the layers above them left
 *    empty, stopping once the tile is full. That alone says which surveys are drawn, whether the
 *    tile is full (img: JPEG or PNG), and which COG tiles need decoding at all.
 * 2. `stackLayers` paints the chosen layers bottom-up, each overwriting with its valid pixels, so
 *    the top layer wins wherever it has data; no per-pixel test of the output as "fill only where
 *    empty" needs.
 */
import { TILE_PIXELS, type TileMask } from './cog-tiles.js';

const MASK_BYTES = TILE_PIXELS / 8;
const BITS_SET = Uint8Array.from({ length: 256 }, (_, byte) => {
  let count = 0;
  for (let v = byte; v; v >>= 1) count += v & 1;
  return count;
});

export interface LayerChoice {
  /** Indexes of the layers that add pixels, top (drawn first) to bottom. */
  used: number[];
  /** Pixels with imagery once those layers are drawn. */
  covered: number;
}

/** Masks in draw order (the first wins where several have data). */
export function chooseLayers(masks: readonly TileMask[]): LayerChoice {
  const used: number[] = [];
  let coverage: Uint8Array | undefined;
  let covered = 0;
  for (let index = 0; index < masks.length && covered < TILE_PIXELS; index++) {
    const mask = masks[index] as TileMask;
    if (mask.kind === 'empty') continue;
    if (mask.kind === 'full') {
      used.push(index);
      covered = TILE_PIXELS;
      break;
    }
    coverage ??= new Uint8Array(MASK_BYTES);
    let added = 0;
    for (let i = 0; i < MASK_BYTES; i++) {
      const before = coverage[i] as number;
      const fresh = (mask.bits[i] as number) & ~before;
      if (fresh !== 0) {
        added += BITS_SET[fresh] as number;
        coverage[i] = before | fresh;
      }
    }
    if (added > 0) {
      used.push(index);
      covered += added;
    }
  }
  return { used, covered };
}

/**
 * Copies the valid pixels of one layer over `out` (both 256 x 256 words), 8 pixels (one mask byte)
 * at a time: whole bytes of a mask are the common case, and word stores in a plain loop cost less
 * than a `subarray` + `set` per run where masks are ragged (stripes, holes, footprint edges).
 */
function paintMasked(out: Uint32Array, source: Uint32Array, bits: Uint8Array): void {
  for (let i = 0; i < MASK_BYTES; i++) {
    const byte = bits[i] as number;
    if (byte === 0) continue;
    const p = i << 3;
    if (byte === 0xff) {
      for (let k = p; k < p + 8; k++) out[k] = source[k] as number;
      continue;
    }
    for (let k = 0; k < 8; k++) if ((byte & (0x80 >> k)) !== 0) out[p + k] = source[p + k] as number;
  }
}

/** A 32-bit word per pixel over RGBA bytes (copied when not 4-byte aligned; sharp's and Buffer.alloc's large buffers are). */
export function words(buffer: Buffer): Uint32Array {
  const aligned = buffer.byteOffset % 4 === 0 ? buffer : Buffer.from(buffer);
  return new Uint32Array(aligned.buffer, aligned.byteOffset, TILE_PIXELS);
}

/**
 * The composite of `layers` (top first; decoded RGBA with alpha 255 and their masks) as RGBA,
 * transparent where none has data. `into`: a 256 KiB buffer to draw in, whatever it holds (the
 * renderer reuses them: a fresh zeroed one per tile was a tenth of the composite path's time in
 * allocation and garbage collection); a new one otherwise.
 */
export function stackLayers(layers: readonly { pixels: Buffer; mask: TileMask }[], into?: Buffer): Buffer {
  const rgba = into ?? Buffer.allocUnsafeSlow(TILE_PIXELS * 4);
  const out = words(rgba);
  // A full bottom layer writes every pixel; otherwise undrawn pixels must read transparent black.
  if (layers[layers.length - 1]?.mask.kind !== 'full') out.fill(0);
  for (let index = layers.length - 1; index >= 0; index--) {
    const { pixels, mask } = layers[index] as { pixels: Buffer; mask: TileMask };
    if (mask.kind === 'empty') continue;
    if (mask.kind === 'full') out.set(words(pixels));
    else paintMasked(out, words(pixels), mask.bits);
  }
  return rgba;
}
