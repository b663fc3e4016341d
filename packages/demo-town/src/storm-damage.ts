/**
 * What the hurricane did to each building, decided in one place: scene-objects.ts draws it, and
 * tests that look for the damage in nadir's answers (the change between two surveys) ask here
 * where the destroyed houses stood.
 */
import { localToLonLat } from './geo.js';
import type { PlannedBuilding } from './plan-builder.js';
import { DEMO_SURVEYS, type DemoSurvey } from './surveys.js';
import { Terrain } from './terrain.js';
import { planTown } from './town-plan.js';

export type StormFate = 'intact' | 'destroyed' | 'damaged';

/** Below this half-length a building (a shed, a rooftop unit) rides out the storm. */
const SMALL_HALF_LENGTH = 3;

/** Landmarks and small buildings stay intact; of the rest 5% are destroyed and 45% damaged. */
export function stormFate(planned: PlannedBuilding): StormFate {
  if (planned.stormProof || planned.building.halfLength < SMALL_HALF_LENGTH) return 'intact';
  if (planned.roll < 0.05) return 'destroyed';
  if (planned.roll < 0.5) return 'damaged';
  return 'intact';
}

/** A house the hurricane destroyed: its footprint (an oriented rectangle) and its height. */
export interface DestroyedHouse {
  /** Centre, WGS84. */
  lon: number;
  lat: number;
  /** Local metres east and north of the town centre. */
  x: number;
  y: number;
  /** Unit vector of the long axis (east, north). */
  cos: number;
  sin: number;
  halfLength: number;
  halfWidth: number;
  /** Eave height above its base, metres: the least height lost where it stood. */
  wallHeight: number;
}

/**
 * Houses standing in the `before` survey and destroyed in the `after` one (a survey after the
 * hurricane), for the seed the town was generated with.
 */
export function destroyedHouses(
  seed: number,
  before: DemoSurvey = DEMO_SURVEYS[1] as DemoSurvey,
  after: DemoSurvey = DEMO_SURVEYS[2] as DemoSurvey,
): DestroyedHouse[] {
  if (!after.afterHurricane || before.afterHurricane) return [];
  const plan = planTown(seed >>> 0, new Terrain(seed >>> 0));
  const houses: DestroyedHouse[] = [];
  for (const planned of plan.buildings) {
    if (planned.from !== undefined && before.epoch < planned.from) continue;
    if (stormFate(planned) !== 'destroyed') continue;
    const { x, y, cos, sin, halfLength, halfWidth, eaveZ, baseZ } = planned.building;
    const [lon, lat] = localToLonLat(x, y);
    houses.push({ lon, lat, x, y, cos, sin, halfLength, halfWidth, wallHeight: eaveZ - baseZ });
  }
  return houses;
}
