/**
 * The 256 x 256 output tile being composited, RGBA: the general path, for layers drawn shrunk
 * (below a survey's minZoom) or from parts of COG tiles; layer-stack.ts handles the common 1:1 case.
 * Layers are drawn newest first (or as the caller ordered them); each fills only the pixels still
 * empty, so the first layer with imagery at a pixel wins. Pure and synchronous.
 *
 * Pixels are moved as 32-bit words: decoded COG tiles are RGBA with alpha 255, so an output word
 * of 0 means "still empty" and a copied word carries its own coverage. This is the hot loop of every
 * composite tile drawn here; a byte-per-channel version took three times as long.
 */
import { TILE_SIZE } from '../geo/web-mercator.js';
import { maskBit, TILE_PIXELS, type TileMask } from './cog-tiles.js';
import type { PixelWindow } from './planner.js';

export class TileCanvas {
  /** 256 x 256 x 4, row-major; transparent black where nothing was drawn. */
  readonly rgba: Buffer = Buffer.alloc(TILE_PIXELS * 4);
  readonly #words = new Uint32Array(this.rgba.buffer, this.rgba.byteOffset, TILE_PIXELS);
  filled = 0;

  get full(): boolean {
    return this.filled === TILE_PIXELS;
  }

  /**
   * Draws one decoded COG tile (`pixels`: 256 x 256 RGBA, alpha 255, valid where `mask` says) from
   * its `source` window into `target`, shrinking by `scale` (a power of two) below an asset's
   * minZoom. A shrunk output pixel averages the valid source pixels of its block and is drawn only
   * when at least half of the block is valid, so edges stay sharp and coverage stays binary.
   * Returns how many output pixels this call filled.
   */
  draw(pixels: Buffer, mask: TileMask, source: PixelWindow, target: PixelWindow, scale: number): number {
    if (mask.kind === 'empty') return 0;
    const before = this.filled;
    const bits = mask.kind === 'partial' ? mask.bits : undefined;
    if (scale === 1 && isWholeTile(source) && isWholeTile(target)) {
      if (bits === undefined && this.filled === 0) {
        pixels.copy(this.rgba, 0, 0, TILE_PIXELS * 4);
        this.filled = TILE_PIXELS;
      } else {
        this.filled += fillWhole(this.#words, words(pixels), bits);
      }
      return this.filled - before;
    }
    const x0 = Math.ceil(target.x - 0.5);
    const y0 = Math.ceil(target.y - 0.5);
    const x1 = Math.min(TILE_SIZE, Math.ceil(target.x + target.width - 0.5));
    const y1 = Math.min(TILE_SIZE, Math.ceil(target.y + target.height - 0.5));
    const source32 = words(pixels);
    for (let y = y0; y < y1; y++) {
      const sy = Math.floor(source.y + (y - target.y) * scale);
      for (let x = x0; x < x1; x++) {
        const out = y * TILE_SIZE + x;
        if (this.#words[out] !== 0) continue;
        const sx = Math.floor(source.x + (x - target.x) * scale);
        if (scale === 1) {
          const index = sy * TILE_SIZE + sx;
          if (bits && maskBit(bits, index) === 0) continue;
          this.#words[out] = source32[index] as number;
          this.filled++;
        } else if (this.#average(out, pixels, bits, sx, sy, scale)) {
          this.filled++;
        }
      }
    }
    return this.filled - before;
  }

  #average(out: number, pixels: Buffer, bits: Uint8Array | undefined, sx: number, sy: number, scale: number): boolean {
    let r = 0;
    let g = 0;
    let b = 0;
    let count = 0;
    const xEnd = Math.min(TILE_SIZE, sx + scale);
    const yEnd = Math.min(TILE_SIZE, sy + scale);
    for (let y = sy; y < yEnd; y++) {
      for (let x = sx; x < xEnd; x++) {
        const index = y * TILE_SIZE + x;
        if (bits && maskBit(bits, index) === 0) continue;
        const i = index * 4;
        r += pixels[i] as number;
        g += pixels[i + 1] as number;
        b += pixels[i + 2] as number;
        count++;
      }
    }
    if (count * 2 < scale * scale) return false;
    const o = out * 4;
    this.rgba[o] = Math.round(r / count);
    this.rgba[o + 1] = Math.round(g / count);
    this.rgba[o + 2] = Math.round(b / count);
    this.rgba[o + 3] = 255;
    return true;
  }
}

/** One whole COG tile onto the whole output: the mask is walked a byte (8 pixels) at a time. */
function fillWhole(out: Uint32Array, source: Uint32Array, bits: Uint8Array | undefined): number {
  let filled = 0;
  for (let byte = 0; byte < TILE_PIXELS / 8; byte++) {
    const valid = bits === undefined ? 0xff : (bits[byte] as number);
    if (valid === 0) continue;
    const first = byte << 3;
    for (let k = 0; k < 8; k++) {
      const p = first + k;
      if ((valid & (0x80 >> k)) !== 0 && out[p] === 0) {
        out[p] = source[p] as number;
        filled++;
      }
    }
  }
  return filled;
}

/** A 32-bit word per pixel over RGBA bytes (copied when not 4-byte aligned; sharp's and Buffer.alloc's large buffers are). */
function words(buffer: Buffer): Uint32Array {
  const aligned = buffer.byteOffset % 4 === 0 ? buffer : Buffer.from(buffer);
  return new Uint32Array(aligned.buffer, aligned.byteOffset, TILE_PIXELS);
}

function isWholeTile(window: PixelWindow): boolean {
  return window.x === 0 && window.y === 0 && window.width === TILE_SIZE && window.height === TILE_SIZE;
}
