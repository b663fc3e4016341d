/**
 * Colour of a vertical surface hit by an oblique ray: building walls with window rows, an eave
 * shadow and a plinth; gable ends; the steep sides of hip roofs and spires; tree trunks and
 * the sides of crowns. Walls are shaded by how squarely they face the sun.
 */

import type { SunVector } from './lighting.js';
import { BARK, WINDOW } from './palette.js';
import { hashUnit } from './random.js';
import type { Building, SceneObject, Tree } from './scene-types.js';
import { packRgb } from './scene-types.js';

const FLOOR_HEIGHT = 3;
const WINDOW_SPACING = 3.2;

export function facadeColor(
  object: SceneObject | undefined,
  topColor: number,
  x: number,
  y: number,
  z: number,
  sun: SunVector,
  seed: number,
): number {
  if (!object) return scale(topColor, 0.8);
  if (object.kind === 'tree') return treeSide(object, topColor, x, y, z);
  return buildingWall(object, x, y, z, sun, seed);
}

/** Ground under a tree crown, seen by a ray that slipped beneath it: dark, shaded grass. */
export const UNDER_CANOPY_COLOR = packRgb(58, 70, 44);

function treeSide(tree: Tree, topColor: number, x: number, y: number, z: number): number {
  const nearTrunk = Math.sqrt((x - tree.x) ** 2 + (y - tree.y) ** 2) < 0.6;
  if (nearTrunk && z < tree.crownBaseZ && tree.fallenAngle === undefined) return packRgb(BARK[0], BARK[1], BARK[2]);
  return scale(topColor, 0.72);
}

function buildingWall(b: Building, x: number, y: number, z: number, sun: SunVector, seed: number): number {
  const dx = x - b.x;
  const dy = y - b.y;
  const a = dx * b.cos + dy * b.sin;
  const across = -dx * b.sin + dy * b.cos;
  // The wall hit is the side whose edge the point is nearest to.
  const onLongSide = b.halfWidth - Math.abs(across) < b.halfLength - Math.abs(a);
  let nx: number;
  let ny: number;
  let along: number;
  let halfSpan: number;
  if (onLongSide) {
    const sign = across >= 0 ? 1 : -1;
    nx = -b.sin * sign;
    ny = b.cos * sign;
    along = a;
    halfSpan = b.halfLength;
  } else {
    const sign = a >= 0 ? 1 : -1;
    nx = b.cos * sign;
    ny = b.sin * sign;
    along = across;
    halfSpan = b.halfWidth;
  }
  // Walls facing away from the sun still get sky light.
  const facing = Math.max(0, nx * sun.x + ny * sun.y);
  const light = 0.62 + 0.6 * facing;
  const height = z - b.baseZ;
  const wallHeight = b.eaveZ - b.baseZ;
  if (height > wallHeight) {
    // Above the eave: a gable end is wall, anything else is the steep side of the roof.
    const isGableEnd = b.roofStyle === 'gable' && !onLongSide;
    const c = isGableEnd ? b.wallColor : b.roofColor;
    const f = light * (isGableEnd ? 0.92 : 0.85);
    return packRgb(c[0] * f, c[1] * f, c[2] * f);
  }
  let c = b.wallColor;
  let f = light * 0.92;
  if (wallHeight - height < 0.35)
    f *= 0.62; // shadow under the eave
  else if (height < 0.35)
    c = [150, 148, 142]; // plinth
  else if (b.windows && isWindow(height, wallHeight, along, halfSpan)) {
    // Glass reflects the sky a little differently pane by pane.
    const pane = hashUnit(seed, Math.floor(along / WINDOW_SPACING), Math.floor(height / FLOOR_HEIGHT));
    c = WINDOW;
    f = 0.8 + 0.5 * pane;
  }
  return packRgb(c[0] * f, c[1] * f, c[2] * f);
}

function isWindow(height: number, wallHeight: number, along: number, halfSpan: number): boolean {
  if (height > wallHeight - 0.6 || Math.abs(along) > halfSpan - 0.9) return false;
  const inFloor = height % FLOOR_HEIGHT;
  if (inFloor < 0.9 || inFloor > 2.1) return false;
  const inBay = (((along + halfSpan) % WINDOW_SPACING) + WINDOW_SPACING) % WINDOW_SPACING;
  return inBay > 1.0 && inBay < 2.2;
}

function scale(color: number, factor: number): number {
  return packRgb(((color >> 16) & 255) * factor, ((color >> 8) & 255) * factor, (color & 255) * factor);
}
