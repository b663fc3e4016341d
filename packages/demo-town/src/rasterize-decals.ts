/**
 * Flat things on the ground: driveways, parking lots with bay lines, pools with their coping,
 * a cleared sandy lot, concrete slabs where houses were, and storm debris.
 * A decal replaces the ground colour and sits dz above (or below) the bare ground.
 */
import type { CoarseField } from './coarse-field.js';
import { cellGrain, deriveSeed, valueNoise } from './random.js';
import { forEachRectCell } from './raster-window.js';
import type { Decal, SceneGrid } from './scene-types.js';
import { packRgb } from './scene-types.js';

export function rasterizeDecal(grid: SceneGrid, decal: Decal, dtm: CoarseField, seed: number): void {
  const grainSeed = deriveSeed(seed, 71);
  const { color, halfLength: hl, halfWidth: hw } = decal;
  forEachRectCell(grid, decal, (index, a, b, x, y) => {
    // Decals never cover buildings or trees already drawn.
    if (grid.objectIds[index] !== 0) return;
    const grain = cellGrain(grainSeed, Math.floor(x / 0.15), Math.floor(y / 0.15));
    let shade = 0.94 + 0.1 * grain;
    let r = color[0];
    let g = color[1];
    let bl = color[2];
    let z = dtm.sample(x, y) + decal.dz;
    switch (decal.pattern) {
      case 'parking': {
        // Bays 2.7 m wide along the lot's length, in two rows back to back across it.
        const bayLine = Math.abs(a - 2.7 * Math.round(a / 2.7)) < 0.07 && Math.abs(Math.abs(b) - hw / 2) < 2.6;
        if (bayLine) [r, g, bl] = [226, 226, 220];
        shade *= 0.97 + 0.06 * valueNoise(grainSeed, x / 4, y / 4);
        break;
      }
      case 'pool': {
        const coping = hl - Math.abs(a) < 0.5 || hw - Math.abs(b) < 0.5;
        if (coping) {
          [r, g, bl] = [226, 222, 212];
        } else {
          const ripple = 0.94 + 0.12 * valueNoise(grainSeed + 1, x / 0.7, y / 0.7);
          shade = ripple;
          z -= 0.25;
        }
        break;
      }
      case 'vacant': {
        // Cleared sand with scattered clumps of scrub, soft-edged.
        const scrub =
          smoothstep(0.6, 0.75, valueNoise(grainSeed + 2, x / 1.3, y / 1.3)) *
          (0.4 + 0.6 * valueNoise(grainSeed + 5, x / 9, y / 9));
        r += (118 - r) * scrub;
        g += (128 - g) * scrub;
        bl += (80 - bl) * scrub;
        shade *= 0.92 + 0.12 * valueNoise(grainSeed + 3, x / 6, y / 6);
        break;
      }
      case 'slab':
        shade *= 0.9 + 0.15 * valueNoise(grainSeed + 4, x / 1.5, y / 1.5);
        break;
      default:
        break;
    }
    grid.heights[index] = z;
    grid.colors[index] = packRgb(r * shade, g * shade, bl * shade);
  });
}

function smoothstep(edge0: number, edge1: number, value: number): number {
  const t = Math.min(1, Math.max(0, (value - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}
