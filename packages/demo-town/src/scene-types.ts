import { sharedFloat32, sharedUint16, sharedUint32 } from './shared-arrays.js';

/**
 * The shapes the demo town is made of. Everything is in "local" metres (see geo.ts):
 * x east, y north, z metres above the vertical datum (sea level).
 */

export type Rgb = readonly [number, number, number];

export type RoofStyle = 'gable' | 'hip' | 'flat';
export type RoofMaterial = 'shingle' | 'metal' | 'tile' | 'membrane' | 'copper';

/** An axis-aligned rectangle in an object's own (a, b) frame. */
export interface FramePatch {
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

/** A rectangle turned by an angle: the common footprint of buildings and flat decals. */
export interface OrientedRect {
  x: number;
  y: number;
  /** cos/sin of the angle from local east to the rectangle's a axis. */
  cos: number;
  sin: number;
  halfLength: number;
  halfWidth: number;
}

/** A box with a roof. Gable and hip ridges run along the a axis. */
export interface Building extends OrientedRect {
  kind: 'building';
  baseZ: number;
  eaveZ: number;
  roofStyle: RoofStyle;
  /** Rise per metre of horizontal run. */
  pitch: number;
  roofColor: Rgb;
  roofMaterial: RoofMaterial;
  wallColor: Rgb;
  /** Draw rows of windows on the facades (not on rooftop boxes). */
  windows: boolean;
  damage?: { missing: FramePatch[]; tarps: FramePatch[] };
}

export type TreeSpecies = 'oak' | 'pine' | 'palm';

export interface Tree {
  kind: 'tree';
  x: number;
  y: number;
  radius: number;
  baseZ: number;
  topZ: number;
  species: TreeSpecies;
  crownColor: Rgb;
  /** Where the crown starts; below it oblique views see the trunk. */
  crownBaseZ: number;
  /** Set when a storm has laid the tree on the ground: direction it fell, radians from east. */
  fallenAngle?: number;
}

export type SceneObject = Building | Tree;

export type DecalPattern = 'concrete' | 'asphalt' | 'parking' | 'pool' | 'vacant' | 'slab' | 'debris';

/** Something flat painted onto the ground: driveways, parking lots, pools, storm debris. */
export interface Decal extends OrientedRect {
  kind: 'decal';
  pattern: DecalPattern;
  /** Height above (negative: below) the bare ground. */
  dz: number;
  color: Rgb;
}

/** Sun position for a survey's shading and shadows. */
export interface Sun {
  azimuthDeg: number;
  elevationDeg: number;
}

/**
 * The rasterised height model one survey is rendered from. Row 0 is the northern edge; cell
 * (i, j) has its centre at (x0 + (i + 0.5) * cell, y0 - (j + 0.5) * cell).
 */
export interface SceneGrid {
  cell: number;
  x0: number;
  y0: number;
  width: number;
  height: number;
  /** Top-of-surface elevation. */
  heights: Float32Array;
  /** Lit colour of the top surface, packed 0xRRGGBB. */
  colors: Uint32Array;
  /** 0 for ground and decals, otherwise 1 + index into Scene.objects (for facades). */
  objectIds: Uint16Array;
  /**
   * Lowest point of the surface in the cell: -Infinity for solid columns, the crown's underside
   * for tree crowns, so oblique rays can pass under trees and see trunks and the ground.
   */
  undersides: Float32Array;
  /**
   * When set, rasterisers only touch rows [bandStart, bandEnd): threads rasterise disjoint
   * bands of one grid. Cell coordinates are unchanged, so the result is the same as in one go.
   */
  bandStart?: number;
  bandEnd?: number;
}

/**
 * Backing arrays for scene grids, reused from survey to survey: the grids are hundreds of
 * megabytes, and fresh allocations cost page faults and garbage collection each time.
 *
 * Made for the largest grid to come (`capacity` cells), so they are allocated once. Growing them
 * for a larger survey leaves the smaller set alive beside the new one until every thread that saw
 * it has collected its garbage: the demo's first survey's 295 MB beside the second's 494 MB
 * (docs/demo.md, "Memory").
 */
export class GridStorage {
  private heights: Float32Array = new Float32Array(0);
  private colors: Uint32Array = new Uint32Array(0);
  private objectIds: Uint16Array = new Uint16Array(0);
  private undersides: Float32Array = new Float32Array(0);
  private columnHeights: Float32Array = new Float32Array(0);
  private columnUndersides: Float32Array = new Float32Array(0);
  private columnColors: Uint32Array = new Uint32Array(0);

  constructor(capacity = 0) {
    this.reserve(capacity);
  }

  private reserve(cells: number): void {
    if (this.heights.length < cells) {
      this.heights = sharedFloat32(cells);
      this.colors = sharedUint32(cells);
      this.objectIds = sharedUint16(cells);
      this.undersides = sharedFloat32(cells);
    }
    if (this.columnHeights.length < cells) {
      this.columnHeights = sharedFloat32(cells);
      this.columnUndersides = sharedFloat32(cells);
      this.columnColors = sharedUint32(cells);
    }
  }

  /** Column-major arrays for a grid of `cells` cells (see transpose.ts). Invalidates earlier ones. */
  columnMajor(cells: number): { heights: Float32Array; undersides: Float32Array; colors: Uint32Array } {
    this.reserve(cells);
    return {
      heights: this.columnHeights.subarray(0, cells),
      undersides: this.columnUndersides.subarray(0, cells),
      colors: this.columnColors.subarray(0, cells),
    };
  }

  /** A grid over the given window. Invalidates any grid handed out before. */
  allocate(x0: number, y0: number, cell: number, width: number, height: number): SceneGrid {
    const cells = width * height;
    this.reserve(cells);
    const objectIds = this.objectIds.subarray(0, cells);
    objectIds.fill(0);
    const undersides = this.undersides.subarray(0, cells);
    undersides.fill(Number.NEGATIVE_INFINITY);
    return {
      cell,
      x0,
      y0,
      width,
      height,
      heights: this.heights.subarray(0, cells),
      colors: this.colors.subarray(0, cells),
      objectIds,
      undersides,
    };
  }
}

export function packRgb(r: number, g: number, b: number): number {
  return (clampByte(r) << 16) | (clampByte(g) << 8) | clampByte(b);
}

/** Round to the nearest byte value (same as Math.round for non-negatives, but cheaper). */
export function clampByte(value: number): number {
  return value <= 0 ? 0 : value >= 255 ? 255 : (value + 0.5) | 0;
}

/** Multiply a colour by a brightness factor and pack it. */
export function shadeRgb(color: Rgb, factor: number): number {
  return packRgb(color[0] * factor, color[1] * factor, color[2] * factor);
}

export function mixRgb(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

/** Crown base height for a tree of a species: oaks spread low, pines start higher, palms are a tuft. */
export function treeCrownBase(species: TreeSpecies, baseZ: number, topZ: number): number {
  if (species === 'palm') return topZ - 2;
  return baseZ + (topZ - baseZ) * (species === 'oak' ? 0.38 : 0.5);
}
