/**
 * The 256 x 256 output tile being composited: RGB plus a binary coverage mask. Layers are drawn
 * newest first (or as the caller ordered them); each fills only the pixels still empty, so the
 * first layer with imagery at a pixel wins. Pure and synchronous: the pixels are already decoded.
 */
import { TILE_SIZE } from '../geo/web-mercator.js';
import { maskBit, TILE_PIXELS, type TileMask } from './cog-tiles.js';
import type { Rotation } from './panorama.js';
import type { PixelWindow } from './planner.js';

export class TileCanvas {
  /** 256 x 256 x 3, row-major; black where nothing was drawn. */
  rgb: Buffer = Buffer.alloc(TILE_PIXELS * 3);
  /** 255 where a layer drew, 0 where the tile is still empty. */
  alpha: Uint8Array = new Uint8Array(TILE_PIXELS);
  filled = 0;

  get full(): boolean {
    return this.filled === TILE_PIXELS;
  }

  /**
   * Draws one decoded COG tile (`pixels`, 256 x 256 RGB, valid where `mask` says) from its
   * `source` window into `target`, shrinking by `scale` (a power of two) below an asset's minZoom.
   * A shrunk output pixel averages the valid source pixels of its block and is drawn only when at
   * least half of the block is valid, so edges stay sharp and coverage stays binary.
   * Returns how many output pixels this call filled.
   */
  draw(pixels: Buffer, mask: TileMask, source: PixelWindow, target: PixelWindow, scale: number): number {
    if (mask.kind === 'empty') return 0;
    const before = this.filled;
    if (scale === 1 && mask.kind === 'full' && this.filled === 0 && isWholeTile(source) && isWholeTile(target)) {
      pixels.copy(this.rgb, 0, 0, TILE_PIXELS * 3);
      this.alpha.fill(255);
      this.filled = TILE_PIXELS;
      return TILE_PIXELS;
    }
    const bits = mask.kind === 'partial' ? mask.bits : undefined;
    const x0 = Math.ceil(target.x - 0.5);
    const y0 = Math.ceil(target.y - 0.5);
    const x1 = Math.min(TILE_SIZE, Math.ceil(target.x + target.width - 0.5));
    const y1 = Math.min(TILE_SIZE, Math.ceil(target.y + target.height - 0.5));
    for (let y = y0; y < y1; y++) {
      const sy = source.y + (y - target.y) * scale;
      for (let x = x0; x < x1; x++) {
        const out = y * TILE_SIZE + x;
        if (this.alpha[out] !== 0) continue;
        const sx = source.x + (x - target.x) * scale;
        if (scale === 1) {
          const index = Math.floor(sy) * TILE_SIZE + Math.floor(sx);
          if (bits && maskBit(bits, index) === 0) continue;
          this.#set(out, pixels, index);
        } else {
          this.#average(out, pixels, bits, Math.floor(sx), Math.floor(sy), scale);
        }
      }
    }
    return this.filled - before;
  }

  #set(out: number, pixels: Buffer, index: number): void {
    const o = out * 3;
    const i = index * 3;
    this.rgb[o] = pixels[i] as number;
    this.rgb[o + 1] = pixels[i + 1] as number;
    this.rgb[o + 2] = pixels[i + 2] as number;
    this.alpha[out] = 255;
    this.filled++;
  }

  #average(out: number, pixels: Buffer, bits: Uint8Array | undefined, sx: number, sy: number, scale: number): void {
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
        const i = index * 3;
        r += pixels[i] as number;
        g += pixels[i + 1] as number;
        b += pixels[i + 2] as number;
        count++;
      }
    }
    if (count * 2 < scale * scale) return;
    const o = out * 3;
    this.rgb[o] = Math.round(r / count);
    this.rgb[o + 1] = Math.round(g / count);
    this.rgb[o + 2] = Math.round(b / count);
    this.alpha[out] = 255;
    this.filled++;
  }

  /** Turns the picture `rotation` degrees clockwise in place (panorama tiles, decisions.md). */
  rotate(rotation: Rotation): void {
    if (rotation === 0) return;
    const rgb = Buffer.alloc(this.rgb.length);
    const alpha = new Uint8Array(this.alpha.length);
    const last = TILE_SIZE - 1;
    for (let y = 0; y < TILE_SIZE; y++) {
      for (let x = 0; x < TILE_SIZE; x++) {
        // The source pixel that lands at (x, y) of the rotated picture.
        let from: number;
        if (rotation === 90) from = (last - x) * TILE_SIZE + y;
        else if (rotation === 180) from = (last - y) * TILE_SIZE + (last - x);
        else from = x * TILE_SIZE + (last - y);
        const to = y * TILE_SIZE + x;
        alpha[to] = this.alpha[from] as number;
        rgb[to * 3] = this.rgb[from * 3] as number;
        rgb[to * 3 + 1] = this.rgb[from * 3 + 1] as number;
        rgb[to * 3 + 2] = this.rgb[from * 3 + 2] as number;
      }
    }
    this.rgb = rgb;
    this.alpha = alpha;
  }

  /** RGBA for PNG: alpha 0 where nothing was drawn. */
  rgba(): Buffer {
    const out = Buffer.allocUnsafe(TILE_PIXELS * 4);
    for (let i = 0, o = 0, a = 0; a < TILE_PIXELS; a++, i += 3, o += 4) {
      out[o] = this.rgb[i] as number;
      out[o + 1] = this.rgb[i + 1] as number;
      out[o + 2] = this.rgb[i + 2] as number;
      out[o + 3] = this.alpha[a] as number;
    }
    return out;
  }
}

function isWholeTile(window: PixelWindow): boolean {
  return window.x === 0 && window.y === 0 && window.width === TILE_SIZE && window.height === TILE_SIZE;
}
