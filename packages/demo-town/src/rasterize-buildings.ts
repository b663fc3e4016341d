/**
 * Buildings into the height model: roof heights for gable, hip and flat roofs, roof textures
 * (shingle tabs, metal seams, clay tile rows, membrane stains, copper patina) and storm damage.
 */
import { DECKING, TARP } from './palette.js';
import { cellGrain, deriveSeed, hash3, hashUnit, valueNoise } from './random.js';
import { forEachRectCell } from './raster-window.js';
import type { Building, FramePatch, SceneGrid } from './scene-types.js';
import { packRgb } from './scene-types.js';

export function rasterizeBuilding(grid: SceneGrid, building: Building, objectId: number, seed: number): void {
  const textureSeed = deriveSeed(seed, 51 + objectId);
  const { halfLength: hl, halfWidth: hw, eaveZ, pitch, roofColor } = building;
  const damage = building.damage;
  forEachRectCell(grid, building, (index, a, b, x, y) => {
    const toSide = hw - Math.abs(b);
    const toEnd = hl - Math.abs(a);
    // On a hip roof the end faces slope too; the face is whichever eave is nearer.
    const onEndFace = building.roofStyle === 'hip' && toEnd < toSide;
    const upslope = onEndFace ? toEnd : toSide;
    const along = onEndFace ? b : a;
    let z: number;
    let shade: number;
    if (building.roofStyle === 'flat') {
      const toEdge = Math.min(toSide, toEnd);
      const parapet = toEdge < 0.35;
      z = eaveZ + (parapet ? 0.45 : 0);
      shade = (parapet ? 1.1 : 1) * membrane(textureSeed, x, y);
    } else {
      z = eaveZ + pitch * upslope;
      shade = roofTexture(building, textureSeed, along, upslope, x, y);
      const ridge =
        building.roofStyle === 'gable' ? toSide > hw - 0.15 : Math.abs(toSide - toEnd) < 0.12 || toSide > hw - 0.12;
      if (ridge) shade *= 0.88;
    }
    let color = packRgb(roofColor[0] * shade, roofColor[1] * shade, roofColor[2] * shade);
    if (damage) {
      if (insideAny(damage.tarps, a, b)) {
        const wrinkle = 0.82 + 0.3 * valueNoise(textureSeed + 3, x / 0.6, y / 0.6);
        color = packRgb(TARP[0] * wrinkle, TARP[1] * wrinkle, TARP[2] * wrinkle);
        z += 0.03;
      } else if (insideAny(damage.missing, a, b)) {
        const seam = frac(along / 2.4) < 0.06 || frac(upslope / 1.2) < 0.1 ? 0.7 : 1;
        const v = seam * (0.9 + 0.2 * hashUnit(textureSeed, Math.floor(along / 2.4), Math.floor(upslope / 1.2)));
        color = packRgb(DECKING[0] * v, DECKING[1] * v, DECKING[2] * v);
        z -= 0.04;
      }
    }
    if (z > grid.heights[index]!) {
      grid.heights[index] = z;
      grid.colors[index] = color;
      grid.objectIds[index] = objectId;
      grid.undersides[index] = Number.NEGATIVE_INFINITY;
    }
  });
}

function frac(value: number): number {
  return value - Math.floor(value);
}

function insideAny(patches: FramePatch[], a: number, b: number): boolean {
  for (const p of patches) if (a >= p.a0 && a <= p.a1 && b >= p.b0 && b <= p.b1) return true;
  return false;
}

function membrane(seed: number, x: number, y: number): number {
  return (
    0.93 + 0.09 * valueNoise(seed, x / 3, y / 3) + 0.04 * cellGrain(seed, Math.floor(x / 0.15), Math.floor(y / 0.15))
  );
}

/** Brightness multiplier of a pitched roof at a point, from its material's pattern. */
function roofTexture(building: Building, seed: number, along: number, upslope: number, x: number, y: number): number {
  const grain = cellGrain(seed, Math.floor(x / 0.15), Math.floor(y / 0.15));
  switch (building.roofMaterial) {
    case 'shingle': {
      // Tabs in staggered rows; each tab a slightly different shade.
      const row = Math.floor(upslope / 0.34);
      const tab = Math.floor((along + (row & 1) * 0.45) / 0.9);
      return 0.9 + 0.14 * (hash3(seed, row, tab) / 4294967296) + 0.06 * grain;
    }
    case 'metal':
      // Standing seams run down the slope, at right angles to the eave.
      return (frac(along / 0.55) < 0.25 ? 1.07 : 0.97) + 0.03 * grain;
    case 'tile': {
      const barrel = 0.5 + 0.5 * Math.sin((along * 2 * Math.PI) / 0.6);
      return (frac(upslope / 0.4) < 0.25 ? 0.86 : 1) * (0.88 + 0.14 * barrel) + 0.05 * grain;
    }
    case 'copper':
      return 0.86 + 0.24 * valueNoise(seed, x / 0.8, y / 0.8) + 0.04 * grain;
    default:
      return membrane(seed, x, y);
  }
}
