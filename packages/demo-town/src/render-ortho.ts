/**
 * The straight-down products: TrueOrtho (colour of the highest surface at each point, so no
 * lean) and DetailDsm (height of that surface). Both are plain lookups into the scene grid.
 */

import { maskRow } from './footprint.js';
import {
  DSM_NODATA,
  type PixelGrid,
  STRIP_ROWS,
  StripBuffers,
  type StripSink,
  writeRowStrips,
} from './raster-output.js';
import type { Scene } from './scene.js';
import type { Point } from './surveys.js';

/** Scene column of each output column's centre (clamped into the grid). */
export function columnLookup(scene: Scene, out: PixelGrid): Int32Array {
  const { grid } = scene;
  const columns = new Int32Array(out.width);
  for (let ox = 0; ox < out.width; ox++) {
    const x = out.minX + (ox + 0.5) * out.gsd;
    columns[ox] = Math.min(grid.width - 1, Math.max(0, Math.floor((x - grid.x0) / grid.cell)));
  }
  return columns;
}

export function rowOf(scene: Scene, y: number): number {
  const { grid } = scene;
  return Math.min(grid.height - 1, Math.max(0, Math.floor((grid.y0 - y) / grid.cell)));
}

export async function renderTrueOrtho(
  scene: Scene,
  footprint: readonly Point[],
  out: PixelGrid,
  writer: StripSink,
): Promise<void> {
  const columns = columnLookup(scene, out);
  const mask = new Uint8Array(out.width);
  const buffers = new StripBuffers(() => new Uint8Array(out.width * STRIP_ROWS), 4);
  await writeRowStrips(writer, out, buffers, (top, rows, bands) =>
    orthoStrip(scene, footprint, out, columns, mask, top, rows, bands),
  );
}

function orthoStrip(
  scene: Scene,
  footprint: readonly Point[],
  out: PixelGrid,
  columns: Int32Array,
  mask: Uint8Array,
  top: number,
  rows: number,
  bands: Uint8Array[],
): void {
  const colors = scene.grid.colors;
  const [r, g, b, a] = bands as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  for (let row = 0; row < rows; row++) {
    const y = out.maxY - (top + row + 0.5) * out.gsd;
    maskRow(footprint, y, out.minX, out.gsd, mask);
    const base = rowOf(scene, y) * scene.grid.width;
    for (let ox = 0, k = row * out.width; ox < out.width; ox++, k++) {
      if (!mask[ox]) continue;
      const color = colors[base + columns[ox]!]!;
      r[k] = color >> 16;
      g[k] = (color >> 8) & 255;
      b[k] = color & 255;
      a[k] = 255;
    }
  }
}

/**
 * DSM: the highest scene cell whose centre lies in each output pixel (a DSM is the top of
 * surfaces), or the nearest cell when the scene is coarser than the output.
 */
export async function renderDsm(
  scene: Scene,
  footprint: readonly Point[],
  out: PixelGrid,
  writer: StripSink,
): Promise<void> {
  const per = Math.max(1, Math.round(out.gsd / scene.grid.cell));
  // Scene column of the first (western) cell centre inside each output pixel.
  const columns = columnLookup(scene, { ...out, minX: out.minX - (out.gsd * (per - 1)) / (2 * per) });
  const mask = new Uint8Array(out.width);
  const buffers = new StripBuffers(() => new Float32Array(out.width * STRIP_ROWS), 1, DSM_NODATA);
  await writeRowStrips(writer, out, buffers, (top, rows, bands) =>
    dsmStrip(scene, footprint, out, per, columns, mask, top, rows, bands[0]!),
  );
}

function dsmStrip(
  scene: Scene,
  footprint: readonly Point[],
  out: PixelGrid,
  per: number,
  columns: Int32Array,
  mask: Uint8Array,
  top: number,
  rows: number,
  heights: Float32Array,
): void {
  const { grid } = scene;
  for (let row = 0; row < rows; row++) {
    const y = out.maxY - (top + row + 0.5) * out.gsd;
    maskRow(footprint, y, out.minX, out.gsd, mask);
    // First (northern) scene row whose centre falls in this pixel.
    const firstRow = rowOf(scene, y + (out.gsd * (per - 1)) / (2 * per));
    for (let ox = 0, k = row * out.width; ox < out.width; ox++, k++) {
      if (!mask[ox]) continue;
      let highest = Number.NEGATIVE_INFINITY;
      for (let dj = 0; dj < per; dj++) {
        const base = Math.min(firstRow + dj, grid.height - 1) * grid.width;
        for (let di = 0; di < per; di++) {
          const h = grid.heights[base + Math.min(columns[ox]! + di, grid.width - 1)]!;
          if (h > highest) highest = h;
        }
      }
      heights[k] = highest;
    }
  }
}
