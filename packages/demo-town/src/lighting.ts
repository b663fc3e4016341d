/**
 * Sun lighting for the height model: Lambert shading from per-cell normals (finite
 * differences that only look at neighbours of the same object, so roof edges do not pick up
 * the drop to the ground) and soft cast shadows from a coarse shadow-horizon grid.
 */
import type { SceneGrid, Sun } from './scene-types.js';
import type { ShadowHorizon } from './shadows.js';

export interface SunVector {
  x: number;
  y: number;
  z: number;
}

export function sunVector(sun: Sun): SunVector {
  const az = (sun.azimuthDeg * Math.PI) / 180;
  const el = (sun.elevationDeg * Math.PI) / 180;
  return { x: Math.sin(az) * Math.cos(el), y: Math.cos(az) * Math.cos(el), z: Math.sin(el) };
}

const AMBIENT = 0.46;

/**
 * Light rows [rowStart, rowEnd) of the grid in place. Rows only read their neighbours'
 * heights and ids, never their colours, so disjoint row ranges can be lit in parallel.
 */
export function applyLighting(
  grid: SceneGrid,
  sun: Sun,
  shadows: ShadowHorizon,
  rowStart = 0,
  rowEnd = grid.height,
): void {
  const light = sunVector(sun);
  const { width, height, cell, heights, objectIds, colors } = grid;
  const factor = shadows.factor;
  const hz = shadows.values;
  // Bilinear positions in the horizon grid (coarse sample centres at (c + 0.5) * factor),
  // per column once instead of per cell.
  const col0 = new Int32Array(width);
  const col1 = new Int32Array(width);
  const colT = new Float32Array(width);
  for (let i = 0; i < width; i++) {
    const fx = Math.min(Math.max((i + 0.5) / factor - 0.5, 0), shadows.width - 1.001);
    col0[i] = Math.floor(fx);
    col1[i] = Math.min(col0[i]! + 1, shadows.width - 1);
    colT[i] = fx - col0[i]!;
  }
  const invCell = 1 / cell;
  for (let j = rowStart; j < rowEnd; j++) {
    const fy = Math.min(Math.max((j + 0.5) / factor - 0.5, 0), shadows.height - 1.001);
    const cj = Math.floor(fy);
    const ty = fy - cj;
    const rowA = cj * shadows.width;
    const rowB = Math.min(cj + 1, shadows.height - 1) * shadows.width;
    for (let i = 0; i < width; i++) {
      const index = j * width + i;
      const h = heights[index]!;
      const id = objectIds[index]!;
      // Slopes from neighbours of the same object only; one-sided at object edges.
      const sameE = i + 1 < width && objectIds[index + 1] === id;
      const sameW = i > 0 && objectIds[index - 1] === id;
      const sameN = j > 0 && objectIds[index - width] === id;
      const sameS = j + 1 < height && objectIds[index + width] === id;
      const e = sameE ? heights[index + 1]! : h;
      const w = sameW ? heights[index - 1]! : h;
      const n = sameN ? heights[index - width]! : h;
      const s = sameS ? heights[index + width]! : h;
      const spanX = sameE && sameW ? 0.5 : 1;
      const spanY = sameN && sameS ? 0.5 : 1;
      const dzdx = (e - w) * spanX * invCell;
      const dzdy = (n - s) * spanY * invCell;
      const facing = -dzdx * light.x - dzdy * light.y + light.z;
      const lambert = facing > 0 ? facing / Math.sqrt(dzdx * dzdx + dzdy * dzdy + 1) : 0;

      const c0 = col0[i]!;
      const c1 = col1[i]!;
      const tx = colT[i]!;
      const top = hz[rowA + c0]! + (hz[rowA + c1]! - hz[rowA + c0]!) * tx;
      const bottom = hz[rowB + c0]! + (hz[rowB + c1]! - hz[rowB + c0]!) * tx;
      const horizon = top + (bottom - top) * ty;
      const lit = clamp01((h + 0.3 - horizon) / 0.6 + 0.5);

      const brightness = AMBIENT + ((1 - AMBIENT) * lambert * lit) / light.z;
      const color = colors[index]!;
      // Shadows are lit by the blue sky: cooler, not just darker.
      const shade = 1 - lit;
      const r = ((color >> 16) & 255) * brightness * (1 - 0.05 * shade);
      const g = ((color >> 8) & 255) * brightness;
      const b = (color & 255) * brightness * (1 + 0.12 * shade);
      colors[index] = (channel(r) << 16) | (channel(g) << 8) | channel(b);
    }
  }
}

function clamp01(v: number): number {
  return v < 0 ? 0 : Math.min(v, 1);
}

/** Rounds to a byte but never to 0: nothing inside a survey is pure black. */
function channel(v: number): number {
  return v < 4 ? 4 : v > 255 ? 255 : Math.round(v);
}
