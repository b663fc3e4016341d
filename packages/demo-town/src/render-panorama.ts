/**
 * Panorama mosaics: 45-degree oblique views from one cardinal direction, stored north-up on
 * the survey grid. The pixel at ground point P shows the first surface hit by the ray that
 * travels in the viewing direction, descending at 45 degrees, and would reach the ground at P
 * (panorama-line.ts). North = camera looking north: south facades show, tall things lean north.
 */
import { maskRow } from './footprint.js';
import { type LineCells, type LineGeometry, type LineTargets, traceLine } from './panorama-line.js';
import { type PixelGrid, StripBuffers, type StripSink } from './raster-output.js';
import type { Scene } from './scene.js';
import type { Point } from './surveys.js';

export type PanoramaDirection = 'North' | 'South' | 'East' | 'West';
export const PANORAMA_DIRECTIONS: readonly PanoramaDirection[] = ['North', 'South', 'East', 'West'];

/** Output lines per block written. */
const STRIP = 256;

export async function renderPanorama(
  scene: Scene,
  direction: PanoramaDirection,
  footprint: readonly Point[],
  out: PixelGrid,
  writer: StripSink,
): Promise<void> {
  const renderer = new PanoramaRenderer(scene, direction, footprint, out);
  const vertical = direction === 'North' || direction === 'South';
  const lines = vertical ? out.width : out.height;
  for (let first = 0; first < lines; first += STRIP) {
    const count = Math.min(STRIP, lines - first);
    // The pixel work is in a plain method: V8 optimises long loops in async functions poorly.
    const bands = renderer.renderStrip(first, count);
    if (vertical) await writer.write(first, 0, count, out.height, bands);
    else await writer.write(0, first, out.width, count, bands);
  }
}

/** State for one panorama, rendered a strip of output lines at a time. */
class PanoramaRenderer {
  private readonly vertical: boolean;
  private readonly forward: boolean;
  /** Output pixels per line. */
  private readonly along: number;
  private readonly mask: Uint8Array;
  private readonly buffers: StripBuffers<Uint8Array>;
  private readonly stripColors: Int32Array;
  private readonly profile: Float32Array;

  constructor(
    private readonly scene: Scene,
    private readonly direction: PanoramaDirection,
    footprint: readonly Point[],
    private readonly out: PixelGrid,
  ) {
    this.vertical = direction === 'North' || direction === 'South';
    this.forward = direction === 'North' || direction === 'East';
    this.along = this.vertical ? out.height : out.width;
    this.mask = footprintMask(footprint, out);
    this.buffers = new StripBuffers(() => new Uint8Array(STRIP * this.along), 4);
    this.stripColors = new Int32Array(STRIP * this.along);
    this.profile = new Float32Array(this.vertical ? scene.fields.dtm.height : scene.fields.dtm.width);
  }

  /** RGBA blocks for output lines [first, first + count). */
  renderStrip(first: number, count: number): Uint8Array[] {
    const { scene, out, vertical, forward, along } = this;
    // Output position of the m-th pixel in travel order is m, or along - 1 - m when
    // travelling towards lower positions (north or west).
    const reversed = forward === vertical;
    const dtm = scene.fields.dtm;
    // Output position 0's centre, and the step between positions, along the line.
    const origin = vertical ? out.maxY - 0.5 * out.gsd : out.minX + 0.5 * out.gsd;
    const step = vertical ? -out.gsd : out.gsd;
    const lattice0 = vertical ? (dtm.y0 - origin) / dtm.spacing : (origin - dtm.x0) / dtm.spacing;
    const latticeStep = out.gsd / dtm.spacing;
    const firstPos = reversed ? along - 1 : 0;
    const posStep = reversed ? -1 : 1;
    const coordinate0 = origin + firstPos * step;
    const targets: LineTargets = {
      count: along,
      q0: forward ? coordinate0 : -coordinate0,
      dq: (forward ? 1 : -1) * posStep * step,
      profile: this.profile,
      f0: lattice0 + firstPos * latticeStep,
      df: posStep * latticeStep,
    };
    for (let line = first; line < first + count; line++) {
      const fixed = lineCoordinate(out, line, vertical);
      dtm.profile(fixed, vertical, this.profile);
      const geometry: LineGeometry = { vertical, forward, fixed };
      // Stored by output position, one line after another.
      traceLine(
        scene,
        lineCells(scene, this.direction, fixed),
        targets,
        geometry,
        this.stripColors,
        (line - first) * along,
        reversed,
      );
    }
    const bands = this.buffers.next().map((band) => band.subarray(0, count * along));
    copyToBands(this.stripColors, bands, this.mask, out, first, count, vertical);
    return bands;
  }
}

function lineCoordinate(out: PixelGrid, line: number, vertical: boolean): number {
  return vertical ? out.minX + (line + 0.5) * out.gsd : out.maxY - (line + 0.5) * out.gsd;
}

function columnOf(scene: Scene, x: number): number {
  const { grid } = scene;
  return Math.min(grid.width - 1, Math.max(0, Math.floor((x - grid.x0) / grid.cell)));
}

function rowOf(scene: Scene, y: number): number {
  const { grid } = scene;
  return Math.min(grid.height - 1, Math.max(0, Math.floor((grid.y0 - y) / grid.cell)));
}

/** The scene cells along one output line, in travel order. */
function lineCells(scene: Scene, direction: PanoramaDirection, fixed: number): LineCells {
  const { grid } = scene;
  const { cell, width: W, height: H } = grid;
  const base = { heights: grid.heights, undersides: grid.undersides, colors: grid.colors };
  if (direction === 'East' || direction === 'West') {
    const row = rowOf(scene, fixed) * W;
    const east = direction === 'East';
    const start = east ? row : row + W - 1;
    const stride = east ? 1 : -1;
    const p0 = east ? grid.x0 + 0.5 * cell : -(grid.x0 + (W - 0.5) * cell);
    return { ...base, start, stride, length: W, p0, sceneStart: start, sceneStride: stride };
  }
  const column = columnOf(scene, fixed);
  const north = direction === 'North';
  const sceneStart = north ? (H - 1) * W + column : column;
  const sceneStride = north ? -W : W;
  const p0 = north ? grid.y0 - (H - 0.5) * cell : -(grid.y0 - 0.5 * cell);
  // Marching a column: read the column-major copy, where the column is contiguous.
  const { columns } = scene;
  const offset = column * H;
  const start = north ? offset + H - 1 : offset;
  return {
    heights: columns.heights,
    undersides: columns.undersides,
    colors: columns.colors,
    start,
    stride: north ? -1 : 1,
    length: H,
    p0,
    sceneStart,
    sceneStride,
  };
}

/** Row-major footprint mask of the whole output. */
function footprintMask(footprint: readonly Point[], out: PixelGrid): Uint8Array {
  const mask = new Uint8Array(out.width * out.height);
  const row = new Uint8Array(out.width);
  for (let oy = 0; oy < out.height; oy++) {
    maskRow(footprint, out.maxY - (oy + 0.5) * out.gsd, out.minX, out.gsd, row);
    mask.set(row, oy * out.width);
  }
  return mask;
}

/**
 * Unpack traced colours (line after line) into the row-major RGBA block of the strip,
 * keeping only pixels inside the footprint. Columns are copied in bands of 64 rows so the
 * block being written stays in cache.
 */
function copyToBands(
  colors: Int32Array,
  bands: Uint8Array[],
  mask: Uint8Array,
  out: PixelGrid,
  first: number,
  count: number,
  vertical: boolean,
): void {
  const [r, g, b, a] = bands as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  const along = vertical ? out.height : out.width;
  const blockWidth = vertical ? count : out.width;
  if (!vertical) {
    for (let line = 0; line < count; line++) {
      const maskRowStart = (first + line) * out.width;
      for (let x = 0; x < along; x++) {
        if (!mask[maskRowStart + x]) continue;
        const k = line * blockWidth + x;
        const color = colors[line * along + x]!;
        r[k] = color >> 16;
        g[k] = (color >> 8) & 255;
        b[k] = color & 255;
        a[k] = 255;
      }
    }
    return;
  }
  for (let top = 0; top < along; top += 64) {
    const bottom = Math.min(along, top + 64);
    for (let line = 0; line < count; line++) {
      for (let y = top; y < bottom; y++) {
        if (!mask[y * out.width + first + line]) continue;
        const k = y * blockWidth + line;
        const color = colors[line * along + y]!;
        r[k] = color >> 16;
        g[k] = (color >> 8) & 255;
        b[k] = color & 255;
        a[k] = 255;
      }
    }
  }
}
