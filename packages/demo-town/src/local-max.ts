/**
 * "How tall can anything near here be?": the scene's heights max-pooled into blocks, then
 * max-filtered over a radius. Ray marchers start where the ray drops below such a bound, and
 * skip stretches whose neighbourhood is lower than the ray: that is what makes Vert cheap.
 */
import type { SceneGrid } from './scene-types.js';

/** Heights max-pooled into square blocks of whole scene cells. */
export class BlockMax {
  readonly width: number;
  readonly height: number;
  readonly cellsPerBlock: number;
  /** Highest surface in each block. */
  readonly all: Float32Array;
  /** Highest surface in each block counting only heights >= tallHeight (else -Infinity). */
  readonly tall: Float32Array;

  constructor(
    readonly grid: SceneGrid,
    blockSize: number,
    tallHeight: number,
  ) {
    const per = Math.max(1, Math.round(blockSize / grid.cell));
    this.cellsPerBlock = per;
    this.width = Math.ceil(grid.width / per);
    this.height = Math.ceil(grid.height / per);
    this.all = new Float32Array(this.width * this.height).fill(Number.NEGATIVE_INFINITY);
    this.tall = new Float32Array(this.width * this.height).fill(Number.NEGATIVE_INFINITY);
    const { heights, width } = grid;
    for (let j = 0; j < grid.height; j++) {
      const row = Math.floor(j / per) * this.width;
      const cells = j * width;
      for (let bi = 0; bi < this.width; bi++) {
        const b = row + bi;
        let highest = this.all[b]!;
        const end = Math.min(width, (bi + 1) * per);
        for (let i = bi * per; i < end; i++) {
          const h = heights[cells + i]!;
          if (h > highest) highest = h;
        }
        this.all[b] = highest;
        if (highest >= tallHeight && highest > this.tall[b]!) this.tall[b] = highest;
      }
    }
  }

  /** `values` max-filtered over a square of `radius` metres (at least that far in any direction). */
  dilated(values: Float32Array, radius: number): LocalMaxGrid {
    const reach = Math.ceil(radius / (this.cellsPerBlock * this.grid.cell));
    const rows = dilate(values, this.width, this.height, reach, 1);
    return new LocalMaxGrid(this, dilate(rows, this.width, this.height, reach, this.width));
  }
}

export class LocalMaxGrid {
  private readonly blockMetres: number;

  constructor(
    private readonly blocks: BlockMax,
    readonly values: Float32Array,
  ) {
    this.blockMetres = blocks.cellsPerBlock * blocks.grid.cell;
  }

  /** Take the larger of this and another grid on the same blocks, cell by cell. */
  raiseTo(other: LocalMaxGrid): void {
    for (let k = 0; k < this.values.length; k++)
      if (other.values[k]! > this.values[k]!) this.values[k] = other.values[k]!;
  }

  /** Upper bound of surface heights near local (x, y). */
  at(x: number, y: number): number {
    const { blocks } = this;
    const bi = Math.floor((x - blocks.grid.x0) / this.blockMetres);
    const bj = Math.floor((blocks.grid.y0 - y) / this.blockMetres);
    const i = bi < 0 ? 0 : bi >= blocks.width ? blocks.width - 1 : bi;
    const j = bj < 0 ? 0 : bj >= blocks.height ? blocks.height - 1 : bj;
    return this.values[j * blocks.width + i]!;
  }
}

/** 1D running max along rows (stride 1) or columns (stride = width). */
function dilate(source: Float32Array, width: number, height: number, reach: number, stride: number): Float32Array {
  const result = new Float32Array(source.length);
  const along = stride === 1 ? width : height;
  const lines = stride === 1 ? height : width;
  for (let line = 0; line < lines; line++) {
    const start = stride === 1 ? line * width : line;
    for (let p = 0; p < along; p++) {
      let best = Number.NEGATIVE_INFINITY;
      const from = Math.max(0, p - reach);
      const to = Math.min(along - 1, p + reach);
      for (let q = from; q <= to; q++) {
        const v = source[start + q * stride]!;
        if (v > best) best = v;
      }
      result[start + p * stride] = best;
    }
  }
  return result;
}
