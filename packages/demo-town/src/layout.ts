/**
 * The town's fixed street geometry in the town frame (s along the coast, t inland; see geo.ts).
 * It does not depend on the seed, so landmarks can sit on known blocks; the seed decides what
 * is built on the blocks.
 */

/** Mean shoreline; the sea is at t below it. */
export const COAST_T = -265;
export const BEACH_WIDTH = 30;
/** US-98 style coast road. */
export const MAIN_ROAD_T = -200;
export const MAIN_ROAD_HALF_WIDTH = 6;
export const STREET_HALF_WIDTH = 4.5;
export const SIDEWALK_WIDTH = 1.5;
export const CROSS_STREET_SPACING = 110;
export const PARALLEL_STREET_SPACING = 80;

/** Distance from s to the nearest cross street centreline (cross streets sit at s = 55 + 110k). */
export function crossStreetOffset(s: number): number {
  const half = CROSS_STREET_SPACING / 2;
  const m = s - half;
  return m - CROSS_STREET_SPACING * Math.round(m / CROSS_STREET_SPACING);
}

/** Signed distance from t to the nearest parallel street centreline (t = -200 + 80k, k >= 0). */
export function parallelStreetOffset(t: number): number {
  const m = t - MAIN_ROAD_T;
  if (m < PARALLEL_STREET_SPACING / 2) return m;
  return m - PARALLEL_STREET_SPACING * Math.round(m / PARALLEL_STREET_SPACING);
}

export type BlockUse = 'residential' | 'commercial' | 'church' | 'development' | 'park';

/** The buildable area between streets (sidewalks excluded). Block (k, m) is centred on s = 110k, t = -160 + 80m. */
export interface Block {
  k: number;
  m: number;
  s0: number;
  s1: number;
  t0: number;
  t1: number;
  use: BlockUse;
}

export const CHURCH_BLOCK = { k: 0, m: 2 };
export const DEVELOPMENT_BLOCK = { k: 0, m: 1 };
export const PARK_BLOCK = { k: -2, m: 4 };

function blockUse(k: number, m: number): BlockUse {
  if (k === CHURCH_BLOCK.k && m === CHURCH_BLOCK.m) return 'church';
  if (k === DEVELOPMENT_BLOCK.k && m === DEVELOPMENT_BLOCK.m) return 'development';
  if (k === PARK_BLOCK.k && m === PARK_BLOCK.m) return 'park';
  return m === 0 ? 'commercial' : 'residential';
}

export function blockAt(k: number, m: number): Block {
  const inset = STREET_HALF_WIDTH + SIDEWALK_WIDTH;
  const southInset = m === 0 ? MAIN_ROAD_HALF_WIDTH + SIDEWALK_WIDTH : inset;
  const sc = k * CROSS_STREET_SPACING;
  const tSouth = MAIN_ROAD_T + m * PARALLEL_STREET_SPACING;
  return {
    k,
    m,
    s0: sc - CROSS_STREET_SPACING / 2 + inset,
    s1: sc + CROSS_STREET_SPACING / 2 - inset,
    t0: tSouth + southInset,
    t1: tSouth + PARALLEL_STREET_SPACING - inset,
    use: blockUse(k, m),
  };
}

/** Blocks covering the town frame window (inclusive ranges of block indices). */
export function blocksIn(sMin: number, sMax: number, tMax: number): Block[] {
  const blocks: Block[] = [];
  const kMin = Math.floor(sMin / CROSS_STREET_SPACING);
  const kMax = Math.ceil(sMax / CROSS_STREET_SPACING);
  const mMax = Math.ceil((tMax - MAIN_ROAD_T) / PARALLEL_STREET_SPACING);
  for (let m = 0; m <= mMax; m++) {
    for (let k = kMin; k <= kMax; k++) blocks.push(blockAt(k, m));
  }
  return blocks;
}

/** The strip of beach-front lots between the beach and the coast road. */
export const BEACHFRONT = {
  t0: COAST_T + BEACH_WIDTH + 2,
  t1: MAIN_ROAD_T - MAIN_ROAD_HALF_WIDTH - SIDEWALK_WIDTH,
  lotWidth: 18,
};
