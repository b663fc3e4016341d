/** Which cells of a scene grid an object can touch, so rasterisers only visit those. */
import type { OrientedRect, SceneGrid } from './scene-types.js';

export interface CellWindow {
  i0: number;
  i1: number;
  j0: number;
  j1: number;
}

/** Cells whose centres may fall within `halfX`/`halfY` of (x, y); null if none are in the grid. */
export function cellWindow(grid: SceneGrid, x: number, y: number, halfX: number, halfY: number): CellWindow | null {
  const i0 = Math.max(0, Math.floor((x - halfX - grid.x0) / grid.cell));
  const i1 = Math.min(grid.width, Math.ceil((x + halfX - grid.x0) / grid.cell));
  const j0 = Math.max(grid.bandStart ?? 0, Math.floor((grid.y0 - (y + halfY)) / grid.cell));
  const j1 = Math.min(grid.bandEnd ?? grid.height, Math.ceil((grid.y0 - (y - halfY)) / grid.cell));
  return i0 < i1 && j0 < j1 ? { i0, i1, j0, j1 } : null;
}

export function rectWindow(grid: SceneGrid, rect: OrientedRect, margin = 0): CellWindow | null {
  const c = Math.abs(rect.cos);
  const s = Math.abs(rect.sin);
  const halfX = c * rect.halfLength + s * rect.halfWidth + margin;
  const halfY = s * rect.halfLength + c * rect.halfWidth + margin;
  return cellWindow(grid, rect.x, rect.y, halfX, halfY);
}

/**
 * Visit the cells of a rectangle with the cell's coordinates in the rectangle's own frame
 * (a along its length, b across), plus the local x, y of the cell centre.
 */
export function forEachRectCell(
  grid: SceneGrid,
  rect: OrientedRect,
  visit: (index: number, a: number, b: number, x: number, y: number) => void,
): void {
  const window = rectWindow(grid, rect);
  if (!window) return;
  const { cell, x0, y0, width } = grid;
  for (let j = window.j0; j < window.j1; j++) {
    const y = y0 - (j + 0.5) * cell;
    const dy = y - rect.y;
    for (let i = window.i0; i < window.i1; i++) {
      const x = x0 + (i + 0.5) * cell;
      const dx = x - rect.x;
      const a = dx * rect.cos + dy * rect.sin;
      if (a < -rect.halfLength || a > rect.halfLength) continue;
      const b = -dx * rect.sin + dy * rect.cos;
      if (b < -rect.halfWidth || b > rect.halfWidth) continue;
      visit(j * width + i, a, b, x, y);
    }
  }
}
