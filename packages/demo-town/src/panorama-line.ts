/**
 * One line of a panorama: a scene column (North/South) or row (East/West) and the output
 * pixels on it. All rays of the line travel along it, descending at 45 degrees.
 *
 * With travel coordinate p and T = dtm(P) + p(P) for the ground point P of an output pixel,
 * the ray towards P is below a cell's top when height + p >= T. T grows as P moves along the
 * line, so the first such cell never moves backwards: one pointer sweep, linear time.
 */
import { facadeColor, UNDER_CANOPY_COLOR } from './facade.js';
import type { Scene } from './scene.js';

/** Scene cells of the line in travel order: cell n is at index start + n * stride. */
export interface LineCells {
  heights: Float32Array;
  undersides: Float32Array;
  colors: Uint32Array;
  start: number;
  stride: number;
  length: number;
  /** Travel coordinate of cell 0; cell n is at p0 + n * cell. */
  p0: number;
  /** The same cells in the scene grid (object ids are only read at walls). */
  sceneStart: number;
  sceneStride: number;
}

/**
 * The output pixels of the line, in travel order m = 0 .. count - 1: travel coordinate
 * q0 + m * dq, and ground height interpolated in `profile` (the DTM along the line) at
 * lattice position f0 + m * df.
 */
export interface LineTargets {
  count: number;
  q0: number;
  dq: number;
  profile: Float32Array;
  f0: number;
  df: number;
}

/** Maps a travel coordinate on this line back to local x, y (for facade patterns). */
export interface LineGeometry {
  vertical: boolean;
  forward: boolean;
  /** x of a North/South line, y of an East/West line. */
  fixed: number;
}

/**
 * Trace every pixel of the line; the colour of the m-th pixel in travel order goes to
 * out[outBase + m], or out[outBase + count - 1 - m] when `reversed`.
 */
export function traceLine(
  scene: Scene,
  cells: LineCells,
  targets: LineTargets,
  geometry: LineGeometry,
  out: Int32Array,
  outBase: number,
  reversed: boolean,
): void {
  const { heights, undersides, start, stride, length, p0 } = cells;
  const cellColors = cells.colors;
  const { count, q0, dq, profile, f0, df } = targets;
  const profileEnd = profile.length - 1;
  const cell = scene.grid.cell;
  const objectIds = scene.grid.objectIds;
  let pointer = 0;
  let previousTarget = Number.NEGATIVE_INFINITY;
  for (let m = 0; m < count; m++) {
    const q = q0 + m * dq;
    let f = f0 + m * df;
    f = f < 0 ? 0 : Math.min(f, profileEnd);
    const k = f < profileEnd ? Math.floor(f) : profileEnd - 1;
    const ground = profile[k]! + (profile[k + 1]! - profile[k]!) * (f - k);
    // Terrain steeper than 45 degrees would make T go backwards; clamping keeps the sweep valid.
    let target = ground + q;
    if (target < previousTarget) target = previousTarget;
    previousTarget = target;
    while (pointer < length && heights[start + pointer * stride]! + p0 + pointer * cell < target) pointer++;

    let hit = pointer;
    let color = -1;
    while (color < 0) {
      if (hit >= length) {
        color = cellColors[start + (length - 1) * stride]!;
        break;
      }
      const index = start + hit * stride;
      const p = p0 + hit * cell;
      if (target - p < undersides[index]!) {
        // The ray slips under a tree crown here; if it is already down at the ground point,
        // what it sees is the shaded ground beneath the canopy.
        if (p >= q) {
          color = UNDER_CANOPY_COLOR;
          break;
        }
        hit++;
        while (hit < length && heights[start + hit * stride]! + p0 + hit * cell < target) hit++;
        continue;
      }
      const h = heights[index]!;
      const zEntry = target - (p - cell / 2);
      let previous = Number.POSITIVE_INFINITY;
      if (hit > 0) {
        const before = index - stride;
        previous = undersides[before]! > zEntry ? Number.NEGATIVE_INFINITY : heights[before]!;
      }
      // A wall: the ray was already below this cell's top when it crossed into it, and the
      // cell before did not stop it (a real step up, not the stairs of a sloping roof).
      if (zEntry < h - 0.02 && h - previous > 0.5) {
        const pe = p - cell / 2;
        const along = geometry.forward ? pe : -pe;
        const x = geometry.vertical ? geometry.fixed : along;
        const y = geometry.vertical ? along : geometry.fixed;
        const id = objectIds[cells.sceneStart + hit * cells.sceneStride]!;
        color = facadeColor(
          id ? scene.objects[id - 1] : undefined,
          cellColors[index]!,
          x,
          y,
          zEntry,
          scene.sun,
          scene.seed,
        );
      } else {
        color = cellColors[index]!;
      }
    }
    out[reversed ? outBase + count - 1 - m : outBase + m] = color;
  }
}
