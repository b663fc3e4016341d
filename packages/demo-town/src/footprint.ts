/**
 * Survey footprints: polygons in local metres. Rasters cover the footprint's bounding box
 * (snapped to the grid quantum); pixels outside the polygon get alpha 0 / nodata.
 */
import { GRID_QUANTUM } from './geo.js';
import type { Point } from './surveys.js';

export interface Box {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/** Bounding box snapped outwards to GRID_QUANTUM, so every GSD's pixel edges line up. */
export function snappedBounds(polygon: readonly Point[]): Box {
  let minX = Number.POSITIVE_INFINITY;
  let minY = Number.POSITIVE_INFINITY;
  let maxX = Number.NEGATIVE_INFINITY;
  let maxY = Number.NEGATIVE_INFINITY;
  for (const [x, y] of polygon) {
    minX = Math.min(minX, x);
    minY = Math.min(minY, y);
    maxX = Math.max(maxX, x);
    maxY = Math.max(maxY, y);
  }
  const q = GRID_QUANTUM;
  return {
    minX: Math.floor(minX / q - 1e-9) * q,
    minY: Math.floor(minY / q - 1e-9) * q,
    maxX: Math.ceil(maxX / q + 1e-9) * q,
    maxY: Math.ceil(maxY / q + 1e-9) * q,
  };
}

/** Sutherland-Hodgman clip of a polygon to an axis-aligned box. */
export function clipToBox(polygon: readonly Point[], box: Box): Point[] {
  const edges: [(p: Point) => boolean, (a: Point, b: Point) => Point][] = [
    [(p) => p[0] >= box.minX, (a, b) => atX(a, b, box.minX)],
    [(p) => p[0] <= box.maxX, (a, b) => atX(a, b, box.maxX)],
    [(p) => p[1] >= box.minY, (a, b) => atY(a, b, box.minY)],
    [(p) => p[1] <= box.maxY, (a, b) => atY(a, b, box.maxY)],
  ];
  let output: Point[] = [...polygon];
  for (const [inside, cross] of edges) {
    const input = output;
    output = [];
    for (let k = 0; k < input.length; k++) {
      const current = input[k]!;
      const previous = input[(k + input.length - 1) % input.length]!;
      if (inside(current)) {
        if (!inside(previous)) output.push(cross(previous, current));
        output.push(current);
      } else if (inside(previous)) {
        output.push(cross(previous, current));
      }
    }
  }
  return output;
}

function atX(a: Point, b: Point, x: number): Point {
  const t = (x - a[0]) / (b[0] - a[0]);
  return [x, a[1] + t * (b[1] - a[1])];
}

function atY(a: Point, b: Point, y: number): Point {
  const t = (y - a[1]) / (b[1] - a[1]);
  return [a[0] + t * (b[0] - a[0]), y];
}

/**
 * Fill `mask` (one byte per pixel of a row) with 1 where the pixel centre is inside the
 * polygon (even-odd rule), 0 elsewhere. Pixel centres are at originX + (i + 0.5) * gsd.
 */
export function maskRow(polygon: readonly Point[], y: number, originX: number, gsd: number, mask: Uint8Array): void {
  mask.fill(0);
  const crossings: number[] = [];
  for (let k = 0; k < polygon.length; k++) {
    const [x1, y1] = polygon[k]!;
    const [x2, y2] = polygon[(k + 1) % polygon.length]!;
    if (y1 <= y === y2 <= y) continue;
    crossings.push(x1 + ((y - y1) / (y2 - y1)) * (x2 - x1));
  }
  crossings.sort((a, b) => a - b);
  for (let k = 0; k + 1 < crossings.length; k += 2) {
    const from = Math.max(0, Math.ceil((crossings[k]! - originX) / gsd - 0.5));
    const to = Math.min(mask.length, Math.ceil((crossings[k + 1]! - originX) / gsd - 0.5));
    if (to > from) mask.fill(1, from, to);
  }
}

export function pointInPolygon(polygon: readonly Point[], x: number, y: number): boolean {
  let inside = false;
  for (let k = 0, last = polygon.length - 1; k < polygon.length; last = k++) {
    const [x1, y1] = polygon[k]!;
    const [x2, y2] = polygon[last]!;
    if (y1 > y !== y2 > y && x < ((x2 - x1) * (y - y1)) / (y2 - y1) + x1) inside = !inside;
  }
  return inside;
}
