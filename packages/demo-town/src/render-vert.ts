/**
 * The Vert mosaic: frame photos from pinhole cameras on a grid of photo centres, each output
 * pixel taken from the nearest centre. The ray from that camera to the ground point is marched
 * back through the height model, so anything tall leans away from the photo centre: roofs
 * shift outwards and a sliver of facade shows on the side facing the camera.
 */
import { facadeColor, UNDER_CANOPY_COLOR } from './facade.js';
import { maskRow } from './footprint.js';
import { BlockMax, type LocalMaxGrid } from './local-max.js';
import { type PixelGrid, STRIP_ROWS, StripBuffers, type StripSink, writeRowStrips } from './raster-output.js';
import type { Scene } from './scene.js';
import { type DemoSurvey, FLYING_HEIGHT, PHOTO_SPACING, type Point } from './surveys.js';

const CAMERA_Z = FLYING_HEIGHT + 4;
/**
 * Lean is (height above ground) x (distance to the photo centre) / flying height, and pixels
 * are at most ~85 m from their centre: a 4 m neighbourhood covers anything up to ~18 m tall
 * (houses, trees); the few taller things (the spire) are found within a wider reach.
 */
const NEAR_REACH = 4;
const TALL_HEIGHT = 18;
const TALL_REACH = 12;

/** Upper bounds of what rays can hit: around a ground point, and around a short stretch of ray. */
class Ceiling {
  /** Anything within lean reach of a point (near things, plus tall things further out). */
  readonly reach: LocalMaxGrid;
  /** Anything within one block: bounds a ray segment of at most one block length. */
  readonly segment: LocalMaxGrid;
  readonly segmentCells: number;

  constructor(scene: Scene) {
    const blocks = new BlockMax(scene.grid, 1, TALL_HEIGHT);
    this.reach = blocks.dilated(blocks.all, NEAR_REACH);
    this.reach.raiseTo(blocks.dilated(blocks.tall, TALL_REACH));
    this.segment = blocks.dilated(blocks.all, 1);
    this.segmentCells = blocks.cellsPerBlock;
  }
}

export async function renderVert(
  scene: Scene,
  survey: DemoSurvey,
  footprint: readonly Point[],
  out: PixelGrid,
  writer: StripSink,
): Promise<void> {
  const ceiling = new Ceiling(scene);
  const mask = new Uint8Array(out.width);
  const buffers = new StripBuffers(() => new Uint8Array(out.width * STRIP_ROWS), 4);
  await writeRowStrips(writer, out, buffers, (top, rows, bands) =>
    vertStrip(scene, ceiling, survey, footprint, out, mask, top, rows, bands),
  );
}

function vertStrip(
  scene: Scene,
  ceiling: Ceiling,
  survey: DemoSurvey,
  footprint: readonly Point[],
  out: PixelGrid,
  mask: Uint8Array,
  top: number,
  rows: number,
  bands: Uint8Array[],
): void {
  const [offX, offY] = survey.photoGridOffset;
  const [r, g, b, a] = bands as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  for (let row = 0; row < rows; row++) {
    const y = out.maxY - (top + row + 0.5) * out.gsd;
    maskRow(footprint, y, out.minX, out.gsd, mask);
    // Each pixel comes from the photo whose centre is nearest.
    const cy = offY + PHOTO_SPACING * Math.round((y - offY) / PHOTO_SPACING);
    for (let ox = 0, k = row * out.width; ox < out.width; ox++, k++) {
      if (!mask[ox]) continue;
      const x = out.minX + (ox + 0.5) * out.gsd;
      const cx = offX + PHOTO_SPACING * Math.round((x - offX) / PHOTO_SPACING);
      const color = traceFromCamera(scene, ceiling, x, y, cx, cy);
      r[k] = color >> 16;
      g[k] = (color >> 8) & 255;
      b[k] = color & 255;
      a[k] = 255;
    }
  }
}

/** Colour seen by the camera at (cx, cy, CAMERA_Z) looking at the ground point below (x, y). */
function traceFromCamera(scene: Scene, bound: Ceiling, x: number, y: number, cx: number, cy: number): number {
  const { grid } = scene;
  const { heights, undersides, colors, cell, width } = grid;
  // Position in scene cell units (column fi, row fj); cell (i, j) spans [i, i + 1) x [j, j + 1).
  const fi = (x - grid.x0) / cell;
  const fj = (grid.y0 - y) / cell;
  const groundIndex = Math.floor(fj) * width + Math.floor(fi);
  const zg = scene.fields.dtm.sample(x, y);
  const ceiling = bound.reach.at(x, y);
  const dx = cx - x;
  const dy = cy - y;
  const distance = Math.sqrt(dx * dx + dy * dy);
  if (distance < 1e-6 || ceiling <= zg) return colors[groundIndex]!;
  // Walking back towards the camera one cell length per sample: columns change by ux and
  // rows by -uy per sample, and the ray rises by `rise` metres per sample.
  const ux = dx / distance;
  const uy = dy / distance;
  const risePerMetre = (CAMERA_Z - zg) / distance;
  const rise = risePerMetre * cell;
  const first = Math.ceil(Math.min(distance, (ceiling - zg) / risePerMetre) / cell);
  // The scene margin is wider than any lean, so every sample stays inside the grid.
  const segment = bound.segmentCells;
  // Starting at the local maximum, a hit on the very first sample is a top, never a wall.
  let previousTop = Number.POSITIVE_INFINITY;
  let previousUnder = Number.NEGATIVE_INFINITY;
  let previousKnown = true;
  for (let high = first; high >= 0; high -= segment) {
    const low = Math.max(high - segment + 1, 0);
    // Skip a stretch whose whole neighbourhood is lower than the ray there.
    const middle = (high + low) * 0.5 * cell;
    if (bound.segment.at(x + ux * middle, y + uy * middle) < zg + rise * low) {
      previousKnown = false;
      continue;
    }
    if (!previousKnown) {
      const index = Math.floor(fj - uy * (high + 1)) * width + Math.floor(fi + ux * (high + 1));
      previousTop = heights[index]!;
      previousUnder = undersides[index]!;
      previousKnown = true;
    }
    for (let n = high; n >= low; n--) {
      const z = zg + rise * n;
      const index = n === 0 ? groundIndex : Math.floor(fj - uy * n) * width + Math.floor(fi + ux * n);
      const h = heights[index]!;
      const under = undersides[index]!;
      // Hit when the stretch of ray since the previous sample meets this cell's surface:
      // checking only the sample point would let steep rays slip through thin palm fronds.
      if (h >= z && z + rise >= under) {
        // Crossing into this cell from the previous one: a wall if the ray was already below
        // this cell's top there and the previous cell did not block it (a real step up).
        const zBoundary = z + rise / 2;
        const previous = previousUnder > zBoundary ? Number.NEGATIVE_INFINITY : previousTop;
        if (zBoundary < h - 0.02 && h - previous > 0.5) {
          const back = (n + 0.5) * cell;
          const id = grid.objectIds[index]!;
          return facadeColor(
            id ? scene.objects[id - 1] : undefined,
            colors[index]!,
            x + ux * back,
            y + uy * back,
            zBoundary,
            scene.sun,
            scene.seed,
          );
        }
        return colors[index]!;
      }
      previousTop = h;
      previousUnder = under;
    }
  }
  // Reached the ground point without hitting anything: under a crown, or a hair below the DTM.
  return undersides[groundIndex]! > zg ? UNDER_CANOPY_COLOR : colors[groundIndex]!;
}
