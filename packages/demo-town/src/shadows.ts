/**
 * Cast shadows as a "shadow horizon" on a coarse grid: for each coarse cell, the height a
 * surface there must reach to see the sun. Computed with one sweep from the sun's side using
 * the recurrence H(c) = max(top(c'), H(c')) - rise, where c' is one step towards the sun.
 * The neighbour c' falls between two cells and is interpolated, which blurs long shadows a
 * little, like a real penumbra.
 */
import type { SceneGrid, Sun } from './scene-types.js';

/** Coarse grid spacing in metres: soft edges for free, and cheap. */
const SHADOW_SPACING = 0.6;

export interface ShadowHorizon {
  /** Scene cells per coarse cell along each axis. */
  factor: number;
  width: number;
  height: number;
  values: Float32Array;
}

export function shadowHorizon(grid: SceneGrid, sun: Sun): ShadowHorizon {
  const factor = Math.max(1, Math.round(SHADOW_SPACING / grid.cell));
  const width = Math.ceil(grid.width / factor);
  const height = Math.ceil(grid.height / factor);
  const tops = new Float32Array(width * height).fill(Number.NEGATIVE_INFINITY);
  for (let j = 0; j < grid.height; j++) {
    const row = Math.floor(j / factor) * width;
    for (let i = 0; i < grid.width; i++) {
      const h = grid.heights[j * grid.width + i]!;
      const c = row + Math.floor(i / factor);
      if (h > tops[c]!) tops[c] = h;
    }
  }
  // Direction towards the sun in grid steps (i east, j south), scaled so that the dominant
  // axis advances exactly one cell per step.
  const az = (sun.azimuthDeg * Math.PI) / 180;
  const towardsI = Math.sin(az);
  const towardsJ = -Math.cos(az);
  const alongI = Math.abs(towardsI) >= Math.abs(towardsJ);
  const scale = 1 / Math.max(Math.abs(towardsI), Math.abs(towardsJ));
  const rise = scale * factor * grid.cell * Math.tan((sun.elevationDeg * Math.PI) / 180);
  const primarySign = Math.sign(alongI ? towardsI : towardsJ) || 1;
  const secondaryShift = (alongI ? towardsJ : towardsI) * scale;
  const primaryCount = alongI ? width : height;
  const secondaryCount = alongI ? height : width;
  // Cell (p, s) in primary/secondary terms is at p * primaryStep + s * secondaryStep.
  const primaryStep = alongI ? 1 : width;
  const secondaryStep = alongI ? width : 1;

  const values = new Float32Array(width * height);
  // Sweep from the sunny edge: the neighbour towards the sun is always done first.
  for (let step = 0; step < primaryCount; step++) {
    const p = primarySign > 0 ? primaryCount - 1 - step : step;
    const pNext = p + primarySign;
    for (let s = 0; s < secondaryCount; s++) {
      const here = p * primaryStep + s * secondaryStep;
      const sNext = s + secondaryShift;
      const s0 = Math.floor(sNext);
      const t = sNext - s0;
      if (pNext < 0 || pNext >= primaryCount || s0 < 0 || s0 + 1 >= secondaryCount) {
        // Nothing known beyond the edge: lit unless something in between says otherwise.
        values[here] = tops[here]! - 2;
        continue;
      }
      const a = pNext * primaryStep + s0 * secondaryStep;
      const b = a + secondaryStep;
      const top = tops[a]! * (1 - t) + tops[b]! * t;
      const horizon = values[a]! * (1 - t) + values[b]! * t;
      values[here] = Math.max(top, horizon) - rise;
    }
  }
  return { factor, width, height, values };
}
