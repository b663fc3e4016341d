/**
 * Landmarks at fixed places (independent of the seed) so tests and people can find them.
 * Positions are chosen in the town frame on known blocks (layout.ts) and published in WGS84.
 */
import { localToLonLat, townToLocal } from './geo.js';
import type { Rgb } from './scene-types.js';

export interface DemoLandmark {
  id: 'red-roof-store' | 'church-steeple' | 'pond';
  description: string;
  lon: number;
  lat: number;
  /** Expected colour seen from straight above (lit, approximate: textures and sun vary). */
  color: Rgb;
  /** Height of the landmark's top above the surrounding ground, metres (0 for the pond). */
  heightAboveGround: number;
  /** captureDate of the first demo survey that shows it. */
  firstSurveyDate: string;
}

/** Town-frame anchors; scene code builds the landmark objects from these. */
export const CHURCH_TOWER_TOWN = { s: -11, t: 0 };
export const CHURCH_TOWER_HALF_SIZE = 3;
export const CHURCH_TOWER_EAVE_HEIGHT = 15;
export const CHURCH_STEEPLE_HEIGHT = 32;
export const STORE_TOWN = { s: 0, t: -76 };
export const STORE_HALF_LENGTH = 23;
export const STORE_HALF_WIDTH = 14;
export const STORE_HEIGHT = 8;
export const STORE_OPENING_DATE = '2025-01-01';
export const POND_TOWN = { s: -220, t: 160 };
export const POND_RADIUS = 24;

export const STEEPLE_COLOR: Rgb = [62, 168, 128];
export const STORE_ROOF_COLOR: Rgb = [205, 32, 28];
export const POND_COLOR: Rgb = [44, 78, 82];

function lonLatOfTown(s: number, t: number): { lon: number; lat: number } {
  const [x, y] = townToLocal(s, t);
  const [lon, lat] = localToLonLat(x, y);
  return { lon: Number(lon.toFixed(8)), lat: Number(lat.toFixed(8)) };
}

export const DEMO_LANDMARKS: readonly DemoLandmark[] = [
  {
    id: 'red-roof-store',
    description: 'New store with a flat bright red roof, 46 x 28 m, built between the 2024 and 2025 surveys',
    ...lonLatOfTown(STORE_TOWN.s, STORE_TOWN.t),
    color: STORE_ROOF_COLOR,
    heightAboveGround: STORE_HEIGHT,
    firstSurveyDate: '2025-04-02',
  },
  {
    id: 'church-steeple',
    description: 'Church tower with a green copper spire; the point is the base centre, the tip straight above it',
    ...lonLatOfTown(CHURCH_TOWER_TOWN.s, CHURCH_TOWER_TOWN.t),
    color: STEEPLE_COLOR,
    heightAboveGround: CHURCH_STEEPLE_HEIGHT,
    firstSurveyDate: '2024-03-14',
  },
  {
    id: 'pond',
    description: 'Centre of the park pond (dark green-blue water)',
    ...lonLatOfTown(POND_TOWN.s, POND_TOWN.t),
    color: POND_COLOR,
    heightAboveGround: 0,
    firstSurveyDate: '2024-03-14',
  },
];
