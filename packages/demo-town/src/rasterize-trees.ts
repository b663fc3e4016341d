/**
 * Trees into the height model. Crowns are lumpy domes (oaks), cones (pines) or star-shaped
 * frond tufts (palms). Crown cells record their underside so oblique rays can pass beneath
 * them; the cells around the trunk stay solid, which is how trunks show up in panoramas.
 * Storm-felled trees lie on the ground: a trunk, an upturned root plate and a flattened crown.
 */
import { BARK, ROOT_SOIL } from './palette.js';
import { cellGrain, deriveSeed, hashUnit, valueNoise } from './random.js';
import { cellWindow, forEachRectCell } from './raster-window.js';
import type { SceneGrid, Tree } from './scene-types.js';
import { packRgb } from './scene-types.js';

const TRUNK_RADIUS = 0.25;

export function rasterizeTree(grid: SceneGrid, tree: Tree, objectId: number, seed: number): void {
  if (tree.fallenAngle !== undefined) {
    rasterizeFallenTree(grid, tree, tree.fallenAngle, objectId, seed);
    return;
  }
  const leafSeed = deriveSeed(seed, 61);
  const { radius, topZ, crownBaseZ, crownColor } = tree;
  const window = cellWindow(grid, tree.x, tree.y, radius * 1.2, radius * 1.2);
  if (!window) return;
  const frondPhase = hashUnit(leafSeed, objectId, 1) * Math.PI * 2;
  const { cell, x0, y0, width } = grid;
  for (let j = window.j0; j < window.j1; j++) {
    const y = y0 - (j + 0.5) * cell;
    for (let i = window.i0; i < window.i1; i++) {
      const x = x0 + (i + 0.5) * cell;
      const dx = x - tree.x;
      const dy = y - tree.y;
      const d = Math.sqrt(dx * dx + dy * dy);
      const grain = cellGrain(leafSeed, Math.floor(x / 0.15), Math.floor(y / 0.15));
      let top: number;
      let underside: number;
      let shade: number;
      if (tree.species === 'palm') {
        const q = d / radius;
        if (q > 1) continue;
        // Nine fronds that taper towards their tips.
        const spoke = Math.cos(Math.atan2(dy, dx) * 9 + frondPhase);
        const threshold = 0.15 + 0.7 * q * q;
        if (q > 0.22 && spoke < threshold) continue;
        top = topZ - 1.8 * q * q;
        underside = top - 0.4;
        shade = 0.8 + 0.35 * Math.max(0, spoke - threshold) + 0.1 * grain;
      } else {
        const edge = 0.8 + 0.35 * valueNoise(leafSeed, x / 1.4, y / 1.4);
        const q = d / (radius * edge);
        if (q > 1) continue;
        const clump = valueNoise(
          leafSeed + 1,
          x / (tree.species === 'oak' ? 0.8 : 0.5),
          y / (tree.species === 'oak' ? 0.8 : 0.5),
        );
        const rim = Math.sqrt(1 - q * q);
        const crownDepth = topZ - crownBaseZ;
        top = tree.species === 'oak' ? crownBaseZ + crownDepth * rim : topZ - crownDepth * q ** 1.3;
        top += 0.6 * (clump - 0.5);
        underside = crownBaseZ - (tree.species === 'oak' ? 1.2 * rim : 0);
        shade = (0.74 + 0.5 * clump) * (0.94 + 0.12 * grain);
      }
      if (d < TRUNK_RADIUS) underside = Number.NEGATIVE_INFINITY;
      const index = j * width + i;
      if (top <= grid.heights[index]!) continue;
      // Over a roof or a taller crown the column stays solid: nothing to see beneath.
      const beneath = grid.objectIds[index] !== 0 ? grid.undersides[index]! : underside;
      grid.heights[index] = top;
      grid.colors[index] = packRgb(crownColor[0] * shade, crownColor[1] * shade, crownColor[2] * shade);
      grid.objectIds[index] = objectId;
      grid.undersides[index] = Math.min(beneath, underside);
    }
  }
}

function rasterizeFallenTree(grid: SceneGrid, tree: Tree, angle: number, objectId: number, seed: number): void {
  const leafSeed = deriveSeed(seed, 62);
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const height = tree.topZ - tree.baseZ;
  const trunkLength = height * 0.6;
  const crownRadius = tree.radius * 1.1;
  const paint = (index: number, z: number, r: number, g: number, b: number) => {
    if (z <= grid.heights[index]!) return;
    grid.heights[index] = z;
    grid.colors[index] = packRgb(r, g, b);
    grid.objectIds[index] = objectId;
    grid.undersides[index] = Number.NEGATIVE_INFINITY;
  };
  // Crown first, lying at the end of the trunk; flattened and a little yellowed.
  const crown = {
    x: tree.x + cos * (trunkLength + crownRadius * 0.6),
    y: tree.y + sin * (trunkLength + crownRadius * 0.6),
    cos,
    sin,
    halfLength: crownRadius * 1.2,
    halfWidth: crownRadius * 0.85,
  };
  forEachRectCell(grid, crown, (index, a, b, x, y) => {
    const q =
      Math.sqrt((a / crown.halfLength) ** 2 + (b / crown.halfWidth) ** 2) /
      (0.8 + 0.3 * valueNoise(leafSeed, x / 1.2, y / 1.2));
    if (q > 1) return;
    const clump = valueNoise(leafSeed + 1, x / 0.7, y / 0.7);
    const shade = 0.78 + 0.45 * clump;
    const c = tree.crownColor;
    paint(
      index,
      tree.baseZ + Math.min(2.5, crownRadius * 0.7) * Math.sqrt(1 - q * q) + 0.4 * clump,
      (c[0] + 18) * shade,
      (c[1] + 8) * shade,
      c[2] * shade,
    );
  });
  const trunk = {
    x: tree.x + (cos * trunkLength) / 2,
    y: tree.y + (sin * trunkLength) / 2,
    cos,
    sin,
    halfLength: trunkLength / 2,
    halfWidth: 0.3,
  };
  forEachRectCell(grid, trunk, (index) => paint(index, tree.baseZ + 0.5, BARK[0], BARK[1], BARK[2]));
  // The root plate stands up where the tree was.
  const plate = { x: tree.x - cos * 0.3, y: tree.y - sin * 0.3, cos, sin, halfLength: 0.35, halfWidth: 1.3 };
  forEachRectCell(grid, plate, (index) => paint(index, tree.baseZ + 1.4, ROOT_SOIL[0], ROOT_SOIL[1], ROOT_SOIL[2]));
}
