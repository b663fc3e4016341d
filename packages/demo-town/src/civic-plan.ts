/**
 * The landmark blocks: the church with its steeple, the store that is built between the 2024
 * and 2025 surveys, and the park with the pond. Their positions are fixed (landmarks.ts).
 */

import { townToLocal } from './geo.js';
import {
  CHURCH_STEEPLE_HEIGHT,
  CHURCH_TOWER_EAVE_HEIGHT,
  CHURCH_TOWER_HALF_SIZE,
  CHURCH_TOWER_TOWN,
  STEEPLE_COLOR,
  STORE_HALF_LENGTH,
  STORE_HALF_WIDTH,
  STORE_HEIGHT,
  STORE_OPENING_DATE,
  STORE_ROOF_COLOR,
  STORE_TOWN,
} from './landmarks.js';
import type { Block } from './layout.js';
import { ASPHALT, CHURCH_ROOF, CHURCH_WALL, ROOFTOP_UNIT, SAND, STORE_WALL } from './palette.js';
import { type PlanBuilder, townRect } from './plan-builder.js';
import { randomTree, scatterTrees } from './plan-trees.js';
import type { SeededRandom } from './random.js';
import type { Terrain } from './terrain.js';

const STORE_OPENING_EPOCH = Number(STORE_OPENING_DATE.slice(0, 4));

export function planChurchBlock(builder: PlanBuilder, block: Block, rng: SeededRandom): void {
  const tower = CHURCH_TOWER_TOWN;
  const half = CHURCH_TOWER_HALF_SIZE;
  const naveHalfLength = 16;
  const naveS = tower.s + half + naveHalfLength;
  builder.addBuilding(
    {
      rect: townRect(naveS, tower.t, naveHalfLength, 8),
      eaveHeight: 7.5,
      roofStyle: 'gable',
      pitch: 0.75,
      roofColor: CHURCH_ROOF,
      roofMaterial: 'shingle',
      wallColor: CHURCH_WALL,
    },
    { stormProof: true },
  );
  // The tower is a square box whose "hip" roof, with every side meeting at the centre, is the spire.
  builder.addBuilding(
    {
      rect: townRect(tower.s, tower.t, half, half),
      eaveHeight: CHURCH_TOWER_EAVE_HEIGHT,
      roofStyle: 'hip',
      pitch: (CHURCH_STEEPLE_HEIGHT - CHURCH_TOWER_EAVE_HEIGHT) / half,
      roofColor: STEEPLE_COLOR,
      roofMaterial: 'copper',
      wallColor: CHURCH_WALL,
      windows: false,
    },
    { stormProof: true },
  );
  builder.occupy(naveS - half, tower.t, naveHalfLength + half + 3, 11);
  const parkingS0 = naveS + naveHalfLength + 4;
  builder.addDecal(
    townRect((parkingS0 + block.s1) / 2, tower.t, (block.s1 - parkingS0) / 2, 24),
    'parking',
    ASPHALT,
    0.03,
  );
  builder.occupy((parkingS0 + block.s1) / 2, tower.t, (block.s1 - parkingS0) / 2, 24);
  // Old oaks on the church lawn.
  scatterTrees(builder, rng, { s0: block.s0, s1: block.s1, t0: block.t0, t1: block.t1 }, 14);
}

export function planDevelopmentBlock(builder: PlanBuilder, block: Block, rng: SeededRandom): void {
  const whole = townRect(
    (block.s0 + block.s1) / 2,
    (block.t0 + block.t1) / 2,
    (block.s1 - block.s0) / 2,
    (block.t1 - block.t0) / 2,
  );
  // Before the store: a cleared, sandy lot with scrub.
  builder.addDecal(whole, 'vacant', SAND, 0, { until: STORE_OPENING_EPOCH });
  const store = builder.addBuilding(
    {
      rect: townRect(STORE_TOWN.s, STORE_TOWN.t, STORE_HALF_LENGTH, STORE_HALF_WIDTH),
      eaveHeight: STORE_HEIGHT,
      roofStyle: 'flat',
      pitch: 0,
      roofColor: STORE_ROOF_COLOR,
      roofMaterial: 'membrane',
      wallColor: STORE_WALL,
    },
    { from: STORE_OPENING_EPOCH, stormProof: true },
  );
  // Rooftop units along the north edge keep the middle of the red roof clear.
  for (const offset of [-15, -5, 6, 16]) {
    builder.addBuilding(
      {
        rect: townRect(STORE_TOWN.s + offset, STORE_TOWN.t + STORE_HALF_WIDTH - 3, 1.5, 1.1),
        eaveHeight: 1.4,
        roofStyle: 'flat',
        pitch: 0,
        roofColor: ROOFTOP_UNIT,
        roofMaterial: 'metal',
        wallColor: ROOFTOP_UNIT,
        windows: false,
        baseZ: store.eaveZ + 0.3,
      },
      { from: STORE_OPENING_EPOCH, stormProof: true },
    );
  }
  const parkingT1 = STORE_TOWN.t - STORE_HALF_WIDTH - 2;
  const parking = townRect(
    (block.s0 + block.s1) / 2,
    (block.t0 + parkingT1) / 2,
    (block.s1 - block.s0) / 2 - 1,
    (parkingT1 - block.t0) / 2,
  );
  builder.addDecal(parking, 'parking', ASPHALT, 0.03, { from: STORE_OPENING_EPOCH });
  // Young palms planted with the store, along the north lawn.
  for (let s = block.s0 + 4; s < block.s1 - 2; s += 12) {
    randomTree(builder, rng, s, block.t1 - 4, 'palm', STORE_OPENING_EPOCH);
  }
}

export function planParkBlock(builder: PlanBuilder, block: Block, rng: SeededRandom, terrain: Terrain): void {
  let planted = 0;
  for (let attempt = 0; attempt < 200 && planted < 26; attempt++) {
    const s = rng.range(block.s0 + 2, block.s1 - 2);
    const t = rng.range(block.t0 + 2, block.t1 - 2);
    const [x, y] = townToLocal(s, t);
    if (terrain.pondDepth(x, y) > -6 || !builder.isFree(s, t, 3)) continue;
    randomTree(builder, rng, s, t);
    builder.occupy(s, t, 2, 2);
    planted++;
  }
}
