/**
 * Collects what the town plan places, in town-frame terms (s, t), and converts to local
 * coordinates. The plan is what the town looks like at PLAN_EPOCH; scene-objects.ts ages it
 * (tree growth, new buildings, storm damage) for each survey.
 */
import { STREET_COS, STREET_SIN, townToLocal } from './geo.js';
import {
  type Building,
  type Decal,
  type DecalPattern,
  type OrientedRect,
  type Rgb,
  type Tree,
  type TreeSpecies,
  treeCrownBase,
} from './scene-types.js';
import type { Terrain } from './terrain.js';

/** Tree sizes in the plan are as of this decimal year. */
export const PLAN_EPOCH = 2024.0;

export interface PlannedBuilding {
  building: Building;
  /** Epoch from which it exists (undefined: always). */
  from?: number;
  /** Landmarks stay intact through the storm so tests can find them. */
  stormProof: boolean;
  /** Stable per-building random number in [0, 1) for storm damage decisions. */
  roll: number;
}

export interface PlannedTree {
  tree: Tree;
  /** Relative growth of radius and height per year. */
  growthPerYear: number;
  from?: number;
  roll: number;
}

export interface PlannedDecal {
  decal: Decal;
  from?: number;
  until?: number;
}

export interface TownPlan {
  buildings: PlannedBuilding[];
  trees: PlannedTree[];
  decals: PlannedDecal[];
}

/** A rectangle centred at town (s, t); its a axis runs along s, or along t when `alongT`. */
export function townRect(s: number, t: number, halfS: number, halfT: number, alongT = false): OrientedRect {
  const [x, y] = townToLocal(s, t);
  if (alongT) return { x, y, cos: -STREET_SIN, sin: STREET_COS, halfLength: halfT, halfWidth: halfS };
  return { x, y, cos: STREET_COS, sin: STREET_SIN, halfLength: halfS, halfWidth: halfT };
}

export interface BuildingSpec {
  rect: OrientedRect;
  /** Wall height above the ground at the centre. */
  eaveHeight: number;
  roofStyle: Building['roofStyle'];
  pitch: number;
  roofColor: Rgb;
  roofMaterial: Building['roofMaterial'];
  wallColor: Rgb;
  windows?: boolean;
  /** Put the base on top of another building instead of the ground (rooftop units). */
  baseZ?: number;
}

export class PlanBuilder {
  readonly plan: TownPlan = { buildings: [], trees: [], decals: [] };
  /** Town-frame boxes already occupied, to keep trees out of houses and pools. */
  private readonly occupied: { s0: number; s1: number; t0: number; t1: number }[] = [];

  constructor(
    private readonly terrain: Terrain,
    private readonly nextRoll: () => number,
  ) {}

  addBuilding(spec: BuildingSpec, options: { from?: number; stormProof?: boolean } = {}): Building {
    const baseZ = spec.baseZ ?? this.terrain.height(spec.rect.x, spec.rect.y) + 0.25;
    const building: Building = {
      kind: 'building',
      ...spec.rect,
      baseZ,
      eaveZ: baseZ + spec.eaveHeight,
      roofStyle: spec.roofStyle,
      pitch: spec.pitch,
      roofColor: spec.roofColor,
      roofMaterial: spec.roofMaterial,
      wallColor: spec.wallColor,
      windows: spec.windows ?? true,
    };
    const planned: PlannedBuilding = { building, stormProof: options.stormProof ?? false, roll: this.nextRoll() };
    if (options.from !== undefined) planned.from = options.from;
    this.plan.buildings.push(planned);
    return building;
  }

  addTree(
    s: number,
    t: number,
    species: TreeSpecies,
    size: { radius: number; height: number; color: Rgb; growth: number },
    from?: number,
  ): void {
    const [x, y] = townToLocal(s, t);
    const baseZ = this.terrain.height(x, y);
    const topZ = baseZ + size.height;
    const crownBaseZ = treeCrownBase(species, baseZ, topZ);
    const tree: Tree = {
      kind: 'tree',
      x,
      y,
      radius: size.radius,
      baseZ,
      topZ,
      crownBaseZ,
      species,
      crownColor: size.color,
    };
    const planned: PlannedTree = { tree, growthPerYear: size.growth, roll: this.nextRoll() };
    if (from !== undefined) planned.from = from;
    this.plan.trees.push(planned);
  }

  addDecal(
    rect: OrientedRect,
    pattern: DecalPattern,
    color: Rgb,
    dz: number,
    window: { from?: number; until?: number } = {},
  ): void {
    this.plan.decals.push({ decal: { kind: 'decal', ...rect, pattern, color, dz }, ...window });
  }

  /** Forget occupied boxes: blocks are planned one at a time and never overlap. */
  startBlock(): void {
    this.occupied.length = 0;
  }

  /** Mark a town-frame box as taken (trees avoid it). */
  occupy(s: number, t: number, halfS: number, halfT: number): void {
    this.occupied.push({ s0: s - halfS, s1: s + halfS, t0: t - halfT, t1: t + halfT });
  }

  isFree(s: number, t: number, clearance: number): boolean {
    for (const box of this.occupied) {
      if (s > box.s0 - clearance && s < box.s1 + clearance && t > box.t0 - clearance && t < box.t1 + clearance)
        return false;
    }
    return true;
  }
}
