import { SqliteSurveyCatalogue } from '../src/catalogue/sqlite-catalogue.js';
import type { Survey } from '../src/catalogue/survey.js';
import { openSqlite } from '../src/db/sqlite.js';
// Seeded (the demo town's mulberry32) so every run benchmarks the same catalogue.
import { mulberry32 as seededRandom } from '../src/demo/random.js';

/**
 * A synthetic catalogue for the coverage benchmark: survey footprints scattered over a metro
 * region, dense enough that a point is covered by about as many surveys as a real city gets
 * over 15 years of captures several times a year (~100).
 */

/** About 110 x 111 km around Sydney; 100,000 footprints of 2-5 km give ~100 per point. */
export const REGION = { minLon: 150.5, maxLon: 151.7, minLat: -34.4, maxLat: -33.4 };

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** An irregular octagon (like a flight block with clipped corners) of `sizeKm` across. */
function footprint(random: () => number, lon: number, lat: number, sizeKm: number): Survey['footprint'] {
  const halfLat = sizeKm / 2 / 111;
  const halfLon = halfLat / Math.cos((lat * Math.PI) / 180);
  const ring: [number, number][] = [];
  for (let k = 0; k < 8; k++) {
    const angle = (k / 8) * 2 * Math.PI + Math.PI / 8;
    const stretch = 0.85 + 0.3 * random();
    ring.push([lon + Math.cos(angle) * halfLon * stretch * 1.3, lat + Math.sin(angle) * halfLat * stretch * 1.3]);
  }
  ring.push(ring[0] as [number, number]);
  return [[ring]];
}

export function syntheticSurvey(random: () => number, index: number): Survey {
  const lon = REGION.minLon + random() * (REGION.maxLon - REGION.minLon);
  const lat = REGION.minLat + random() * (REGION.maxLat - REGION.minLat);
  const year = 2010 + Math.floor(random() * 16);
  const date = `${year}-${pad(1 + Math.floor(random() * 12))}-${pad(1 + Math.floor(random() * 28))}`;
  const hour = 22 + Math.floor(random() * 4);
  const assets: Survey['assets'] = {};
  const asset = (type: 'Vert' | 'TrueOrtho' | 'DetailDsm', gsd: number, kind: 'rgb' | 'elevation') => ({
    type,
    uri: `file:///bench/${index}/${type}.tif`,
    gsd,
    maxZoom: 21,
    minZoom: 12,
    bounds: { minX: 0, minY: 0, maxX: 1, maxY: 1 },
    width: 1,
    height: 1,
    kind,
    version: 1,
  });
  assets.Vert = asset('Vert', 0.075, 'rgb');
  // Most recent captures carry the 3D products, as in a real archive.
  if (year >= 2016 && random() < 0.7) {
    assets.TrueOrtho = asset('TrueOrtho', 0.075, 'rgb');
    assets.DetailDsm = asset('DetailDsm', 0.15, 'elevation');
  }
  return {
    id: `bench-${pad(index, 6)}`,
    captureDate: date,
    firstPhotoTime: `${date}T${pad(hour % 24)}:00:00.000Z`,
    lastPhotoTime: `${date}T${pad((hour + 2) % 24)}:30:00.000Z`,
    tags: random() < 0.03 ? ['disaster:storm'] : [],
    footprint: footprint(random, lon, lat, 2 + random() * 3),
    version: 1,
    assets,
    ingestedAt: '2025-01-01T00:00:00.000Z',
  };
}

/** Writes `count` surveys in one transaction (each put becomes a savepoint): seconds, not minutes. */
export async function buildSyntheticCatalogue(path: string, count: number, seed = 42): Promise<void> {
  const db = openSqlite(path);
  try {
    const catalogue = new SqliteSurveyCatalogue(db);
    const random = seededRandom(seed);
    db.exec('BEGIN');
    for (let i = 0; i < count; i++) await catalogue.put(syntheticSurvey(random, i));
    db.exec('COMMIT');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
}

/** Query points inside the region, away from its edges so every one is fully surrounded. */
export function queryPoints(count: number, seed = 7): Array<[number, number]> {
  const random = seededRandom(seed);
  const margin = 0.05;
  return Array.from({ length: count }, () => [
    REGION.minLon + margin + random() * (REGION.maxLon - REGION.minLon - 2 * margin),
    REGION.minLat + margin + random() * (REGION.maxLat - REGION.minLat - 2 * margin),
  ]);
}
