/**
 * A column-major copy of the lit scene for the North and South panoramas, which march down
 * columns: in the row-major grid every step of such a march touches a new cache line. Made
 * once per survey (in parallel column ranges) and shared by both directions.
 */
import type { SceneGrid } from './scene-types.js';

/** Cell (i, j) of the scene is at index i * height + j. */
export interface ColumnMajorGrid {
  heights: Float32Array;
  undersides: Float32Array;
  colors: Uint32Array;
}

const TILE = 64;

/** Copy scene columns [columnStart, columnEnd) in tiles, so reads and writes both stay in cache. */
export function transposeColumns(
  grid: SceneGrid,
  target: ColumnMajorGrid,
  columnStart: number,
  columnEnd: number,
): void {
  const { width, height } = grid;
  for (let i0 = columnStart; i0 < columnEnd; i0 += TILE) {
    const i1 = Math.min(columnEnd, i0 + TILE);
    for (let j0 = 0; j0 < height; j0 += TILE) {
      const j1 = Math.min(height, j0 + TILE);
      for (let i = i0; i < i1; i++) {
        const column = i * height;
        for (let j = j0; j < j1; j++) {
          const from = j * width + i;
          target.heights[column + j] = grid.heights[from]!;
          target.undersides[column + j] = grid.undersides[from]!;
          target.colors[column + j] = grid.colors[from]!;
        }
      }
    }
  }
}
