/**
 * A smooth quantity (terrain height, distance inland, ...) sampled on a coarse grid and read
 * back with bilinear interpolation: far cheaper than evaluating noise for every fine cell.
 */
import { deriveSeed, fractalNoise } from './random.js';
import { sharedFloat32 } from './shared-arrays.js';
import type { Terrain } from './terrain.js';

/** What a CoarseField is made of: plain data that can be posted to a worker. */
export interface CoarseFieldData {
  x0: number;
  y0: number;
  spacing: number;
  width: number;
  height: number;
  values: Float32Array;
}

export class CoarseField implements CoarseFieldData {
  readonly x0: number;
  readonly y0: number;
  readonly spacing: number;
  readonly width: number;
  readonly height: number;
  readonly values: Float32Array;

  /** (x0, y0) is the centre of sample (0, 0), the north-west one; rows run south. */
  constructor(data: CoarseFieldData) {
    this.x0 = data.x0;
    this.y0 = data.y0;
    this.spacing = data.spacing;
    this.width = data.width;
    this.height = data.height;
    this.values = data.values;
  }

  static sampled(
    x0: number,
    y0: number,
    spacing: number,
    width: number,
    height: number,
    fill: (x: number, y: number) => number,
  ): CoarseField {
    const values = sharedFloat32(width * height);
    for (let j = 0; j < height; j++) {
      for (let i = 0; i < width; i++) values[j * width + i] = fill(x0 + i * spacing, y0 - j * spacing);
    }
    return new CoarseField({ x0, y0, spacing, width, height, values });
  }

  /**
   * Values along a line: for a vertical line at x = fixed, one value per lattice row (top to
   * bottom); for a horizontal line at y = fixed, one per lattice column. Linear interpolation
   * within `out` then gives exactly what sample() would on that line.
   */
  profile(fixed: number, vertical: boolean, out: Float32Array): void {
    const across = vertical ? (fixed - this.x0) / this.spacing : (this.y0 - fixed) / this.spacing;
    const limit = (vertical ? this.width : this.height) - 1;
    const f = across < 0 ? 0 : Math.min(across, limit);
    const k = Math.min(Math.floor(f), limit - 1);
    const t = f - k;
    const count = vertical ? this.height : this.width;
    for (let n = 0; n < count; n++) {
      const a = vertical ? this.values[n * this.width + k]! : this.values[k * this.width + n]!;
      const b = vertical ? this.values[n * this.width + k + 1]! : this.values[(k + 1) * this.width + n]!;
      out[n] = a + (b - a) * t;
    }
  }

  sample(x: number, y: number): number {
    let fx = (x - this.x0) / this.spacing;
    let fy = (this.y0 - y) / this.spacing;
    const maxX = this.width - 1;
    const maxY = this.height - 1;
    fx = fx < 0 ? 0 : Math.min(fx, maxX);
    fy = fy < 0 ? 0 : Math.min(fy, maxY);
    const i = Math.min(Math.floor(fx), maxX - 1);
    const j = Math.min(Math.floor(fy), maxY - 1);
    const tx = fx - i;
    const ty = fy - j;
    const v = this.values;
    const k = j * this.width + i;
    const top = v[k]! + (v[k + 1]! - v[k]!) * tx;
    const bottom = v[k + this.width]! + (v[k + this.width + 1]! - v[k + this.width]!) * tx;
    return top + (bottom - top) * ty;
  }
}

/**
 * Bilinear weights for one position, reused to read several fields laid out on the same
 * lattice (the terrain fields all are): one locate, several cheap reads.
 */
export class LatticeCursor {
  private index = 0;
  private tx = 0;
  private ty = 0;

  private readonly inverseSpacing: number;

  constructor(private readonly lattice: CoarseField) {
    this.inverseSpacing = 1 / lattice.spacing;
  }

  moveTo(x: number, y: number): void {
    const f = this.lattice;
    let fx = (x - f.x0) * this.inverseSpacing;
    let fy = (f.y0 - y) * this.inverseSpacing;
    const maxX = f.width - 1;
    const maxY = f.height - 1;
    fx = fx < 0 ? 0 : Math.min(fx, maxX);
    fy = fy < 0 ? 0 : Math.min(fy, maxY);
    const i = Math.min(Math.floor(fx), maxX - 1);
    const j = Math.min(Math.floor(fy), maxY - 1);
    this.tx = fx - i;
    this.ty = fy - j;
    this.index = j * f.width + i;
  }

  /** Value of `field` (same lattice as the cursor's) at the last position moved to. */
  read(field: CoarseField): number {
    const v = field.values;
    const k = this.index;
    const w = field.width;
    const top = v[k]! + (v[k + 1]! - v[k]!) * this.tx;
    const bottom = v[k + w]! + (v[k + w + 1]! - v[k + w]!) * this.tx;
    return top + (bottom - top) * this.ty;
  }
}

/** The coarse fields the ground painter and the renderers need, over one window. */
export interface TerrainFields {
  /** Bare-earth elevation (water surfaces on water): where Vert and panorama rays land. */
  dtm: CoarseField;
  /** Distance inland from the shoreline, metres (negative at sea). */
  inland: CoarseField;
  /** Distance inside the pond shore (positive in the water). */
  pondDepth: CoarseField;
  /** Low-frequency 0..1 field for lawn colour (lush to dry). */
  grassTone: CoarseField;
}

export const FIELD_SPACING = 1.2;

/** Fields covering the window [minX, maxX] x [minY, maxY] in local metres, with one sample to spare. */
export function buildTerrainFields(
  terrain: Terrain,
  seed: number,
  window: { minX: number; minY: number; maxX: number; maxY: number },
): TerrainFields {
  const x0 = Math.floor(window.minX / FIELD_SPACING) * FIELD_SPACING - FIELD_SPACING;
  const y0 = Math.ceil(window.maxY / FIELD_SPACING) * FIELD_SPACING + FIELD_SPACING;
  const width = Math.ceil((window.maxX - x0) / FIELD_SPACING) + 2;
  const height = Math.ceil((y0 - window.minY) / FIELD_SPACING) + 2;
  const toneSeed = deriveSeed(seed, 31);
  const make = (fill: (x: number, y: number) => number) =>
    CoarseField.sampled(x0, y0, FIELD_SPACING, width, height, fill);
  return {
    dtm: make((x, y) => terrain.height(x, y)),
    inland: make((x, y) => terrain.inland(x, y)),
    pondDepth: make((x, y) => terrain.pondDepth(x, y)),
    grassTone: make((x, y) => fractalNoise(toneSeed, x / 25, y / 25, 3)),
  };
}

/** Rebuild TerrainFields from posted data (class instances arrive as plain objects). */
export function reviveTerrainFields(data: Record<keyof TerrainFields, CoarseFieldData>): TerrainFields {
  return {
    dtm: new CoarseField(data.dtm),
    inland: new CoarseField(data.inland),
    pondDepth: new CoarseField(data.pondDepth),
    grassTone: new CoarseField(data.grassTone),
  };
}
