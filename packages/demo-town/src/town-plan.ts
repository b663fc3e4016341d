/**
 * Lays out the town for a seed: houses on lots, shops on the coast road, beach houses,
 * trees, pools and driveways. The landmark blocks come from civic-plan.ts.
 */
import { planChurchBlock, planDevelopmentBlock, planParkBlock } from './civic-plan.js';
import { BEACHFRONT, type Block, blocksIn } from './layout.js';
import {
  ASPHALT,
  COMMERCIAL_WALLS,
  CONCRETE,
  CROWN_COLORS,
  FLAT_ROOFS,
  HOUSE_ROOFS,
  HOUSE_WALLS,
  POOL_WATER,
  ROOFTOP_UNIT,
} from './palette.js';
import { PlanBuilder, type TownPlan, townRect } from './plan-builder.js';
import { scatterTrees } from './plan-trees.js';
import { deriveSeed, hash3, SeededRandom } from './random.js';
import type { Terrain } from './terrain.js';

/** Half-size of the planned area in the town frame; the surveys see less than this. */
const PLAN_HALF_EXTENT = 420;

export function planTown(seed: number, terrain: Terrain): TownPlan {
  const rollRandom = new SeededRandom(deriveSeed(seed, 21));
  const builder = new PlanBuilder(terrain, () => rollRandom.float());
  for (const block of blocksIn(-PLAN_HALF_EXTENT, PLAN_HALF_EXTENT, PLAN_HALF_EXTENT)) {
    // Each block has its own stream, so changing one block's rules leaves the others alone.
    const rng = new SeededRandom(hash3(deriveSeed(seed, 22), block.k, block.m));
    builder.startBlock();
    switch (block.use) {
      case 'church':
        planChurchBlock(builder, block, rng);
        break;
      case 'development':
        planDevelopmentBlock(builder, block, rng);
        break;
      case 'park':
        planParkBlock(builder, block, rng, terrain);
        break;
      case 'commercial':
        planCommercialFront(builder, block, rng);
        planHouseRow(builder, block, 'north', rng);
        break;
      case 'residential':
        planHouseRow(builder, block, 'south', rng);
        planHouseRow(builder, block, 'north', rng);
        break;
    }
  }
  builder.startBlock();
  planBeachfront(builder, new SeededRandom(deriveSeed(seed, 23)));
  return builder.plan;
}

interface HouseSpec {
  s: number;
  t: number;
  length: number;
  depth: number;
  eaveHeight: number;
}

function addHouse(builder: PlanBuilder, rng: SeededRandom, house: HouseSpec): void {
  const style = rng.pick(['gable', 'gable', 'gable-cross', 'hip', 'hip'] as const);
  const roof = rng.pick(HOUSE_ROOFS);
  const alongT = style === 'gable-cross';
  builder.addBuilding({
    rect: townRect(house.s, house.t, house.length / 2, house.depth / 2, alongT),
    eaveHeight: house.eaveHeight,
    roofStyle: style === 'hip' ? 'hip' : 'gable',
    pitch: style === 'hip' ? rng.range(0.32, 0.5) : rng.range(0.38, 0.65),
    roofColor: roof.color,
    roofMaterial: roof.material,
    wallColor: rng.pick(HOUSE_WALLS),
  });
  builder.occupy(house.s, house.t, house.length / 2, house.depth / 2);
}

/** One row of five lots; 'south' lots face the street on the block's south side. */
function planHouseRow(builder: PlanBuilder, block: Block, row: 'south' | 'north', rng: SeededRandom): void {
  const mid = (block.t0 + block.t1) / 2;
  const front = row === 'south' ? block.t0 : block.t1;
  const back = mid;
  const inward = row === 'south' ? 1 : -1;
  const lots = 5;
  const lotWidth = (block.s1 - block.s0) / lots;
  for (let lot = 0; lot < lots; lot++) {
    const s0 = block.s0 + lot * lotWidth;
    const lotBox = { s0, s1: s0 + lotWidth, t0: Math.min(front, back), t1: Math.max(front, back) };
    if (rng.chance(0.1)) {
      scatterTrees(builder, rng, lotBox, rng.int(1, 4));
      continue;
    }
    const length = Math.min(rng.range(10, 15.5), lotWidth - 4);
    const depth = rng.range(8.5, 12.5);
    const setback = rng.range(5, 8);
    const s = s0 + lotWidth / 2 + rng.range(-1, 1);
    const t = front + inward * (setback + depth / 2);
    addHouse(builder, rng, { s, t, length, depth, eaveHeight: rng.chance(0.4) ? 5.8 : 3.1 });
    // Driveway from the front wall, across the sidewalk, to the street.
    const driveS = s + (rng.chance(0.5) ? 1 : -1) * (length / 2 - 1.8);
    const driveLength = setback + 1.5;
    const driveT = front + inward * (setback / 2 - 0.75);
    builder.addDecal(townRect(driveS, driveT, 1.6, driveLength / 2), 'concrete', CONCRETE, 0.05);
    builder.occupy(driveS, driveT, 1.6, driveLength / 2);
    const backyard = Math.abs(back - (t + (inward * depth) / 2));
    if (backyard > 7.5 && rng.chance(0.28)) {
      const poolT = t + inward * (depth / 2 + backyard / 2);
      builder.addDecal(townRect(s + rng.range(-2, 2), poolT, 4.2, 2.4), 'pool', POOL_WATER, 0);
      builder.occupy(s, poolT, 4.5, 2.7);
    }
    scatterTrees(builder, rng, lotBox, rng.int(0, 4));
  }
}

/** Shops along the coast road: flat roofs, rooftop units, parking in front. */
function planCommercialFront(builder: PlanBuilder, block: Block, rng: SeededRandom): void {
  const parcels = rng.int(2, 3);
  const parcelWidth = (block.s1 - block.s0) / parcels;
  const mid = (block.t0 + block.t1) / 2;
  for (let p = 0; p < parcels; p++) {
    const s = block.s0 + (p + 0.5) * parcelWidth;
    const length = parcelWidth - rng.range(5, 10);
    const parking = rng.range(12, 17);
    const depth = Math.min(rng.range(13, 19), mid - block.t0 - parking - 1);
    const t = block.t0 + parking + depth / 2;
    builder.addDecal(townRect(s, block.t0 + parking / 2, parcelWidth / 2 - 1, parking / 2), 'parking', ASPHALT, 0.03);
    const roofZ = rng.range(4.2, 6.2);
    const building = builder.addBuilding({
      rect: townRect(s, t, length / 2, depth / 2),
      eaveHeight: roofZ,
      roofStyle: 'flat',
      pitch: 0,
      roofColor: rng.pick(FLAT_ROOFS),
      roofMaterial: 'membrane',
      wallColor: rng.pick(COMMERCIAL_WALLS),
    });
    builder.occupy(s, t, length / 2, depth / 2);
    for (let u = rng.int(1, 4); u > 0; u--) {
      builder.addBuilding({
        rect: townRect(
          s + rng.range(-length / 2 + 3, length / 2 - 3),
          t + rng.range(-depth / 2 + 2.5, depth / 2 - 2.5),
          1.2,
          0.9,
        ),
        eaveHeight: 1.2,
        roofStyle: 'flat',
        pitch: 0,
        roofColor: ROOFTOP_UNIT,
        roofMaterial: 'metal',
        wallColor: ROOFTOP_UNIT,
        windows: false,
        baseZ: building.eaveZ + 0.3,
      });
    }
    // Palms along the road edge of the parking lot.
    for (let k = -1; k <= 1; k += 2)
      builder.addTree(s + k * (parcelWidth / 2 - 2.5), block.t0 + 1.5, 'palm', {
        radius: 2.4,
        height: 8,
        color: rng.pick(CROWN_COLORS.palm),
        growth: 0.06,
      });
  }
}

/** Beach houses on stilts between the beach and the coast road. */
function planBeachfront(builder: PlanBuilder, rng: SeededRandom): void {
  const { t0, t1, lotWidth } = BEACHFRONT;
  for (let s0 = -PLAN_HALF_EXTENT; s0 < PLAN_HALF_EXTENT; s0 += lotWidth) {
    if (!rng.chance(0.65)) continue;
    const length = rng.range(10, 13.5);
    const depth = rng.range(8.5, 10.5);
    const s = s0 + lotWidth / 2;
    const t = (t0 + t1) / 2 - 1;
    addHouse(builder, rng, { s, t, length, depth, eaveHeight: 7 });
    builder.addDecal(townRect(s + length / 2 - 2, t1 - 2.5, 1.7, 3.5), 'concrete', CONCRETE, 0.05);
    if (rng.chance(0.5))
      builder.addTree(s - length / 2 - 1.5, t0 + 2, 'palm', {
        radius: 2.2,
        height: rng.range(6, 9),
        color: rng.pick(CROWN_COLORS.palm),
        growth: 0.06,
      });
  }
}
