import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
// Seeded (the demo town's mulberry32) so every run benchmarks the same catalogue.
import { mulberry32 as seededRandom } from '@nadir/demo-town/random';
import { SqliteSurveyCatalogue } from '../../src/catalogue/sqlite-catalogue.js';
import type { Survey } from '../../src/catalogue/survey.js';
import { openSqlite } from '../../src/db/sqlite.js';

/**
 * A synthetic catalogue shaped like a national aerial programme: surveys are flight blocks of
 * 2-5 km, flown over and over the same towns and cities for 15 years; the country between them is
 * empty. Each city is a disc of 3-10 km radius whose every point was flown 4-40 times (a rural
 * town a few times, a capital two or three times a year), so a 100 m AOI in a city matches a handful to a few
 * dozen surveys, as in a real archive. A bigger archive is more cities, not deeper ones: the region
 * grows with the count (one city per ~50 x 50 km), so the catalogue size is what changes between
 * 1k and 1M surveys, not how many surveys a query matches.
 */

/** Bump whenever the generated surveys change: cached catalogues carry it in their file name. */
export const GENERATOR_VERSION = 2;
const SEED = 42;
const KM_PER_DEGREE = 111.32;
/** Centre of the region (central Australia): a region of 1M surveys is ~3,500 km across. */
const CENTRE = { lon: 134, lat: -25 };
const KM2_PER_CITY = 50 * 50;
/** Mean footprint area in km2 (the octagons below): ties a city's depth to its survey count. */
const MEAN_FOOTPRINT_KM2 = 15.6;

export interface City {
  lon: number;
  lat: number;
  radiusKm: number;
  /** Surveys placed in it. */
  surveys: number;
}

export interface SyntheticCatalogue {
  cities: City[];
  /** Survey centres, for query points where people ask (where the imagery is). */
  centres: Float64Array;
  /** The region's half-size in degrees of latitude and longitude. */
  halfLat: number;
  halfLon: number;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

const degLat = (km: number) => km / KM_PER_DEGREE;
const degLon = (km: number, lat: number) => km / (KM_PER_DEGREE * Math.cos((lat * Math.PI) / 180));

/** An irregular octagon (like a flight block with clipped corners) of `sizeKm` across. */
function footprint(random: () => number, lon: number, lat: number, sizeKm: number): Survey['footprint'] {
  const halfLat = degLat(sizeKm / 2);
  const halfLon = degLon(sizeKm / 2, lat);
  const ring: [number, number][] = [];
  for (let k = 0; k < 8; k++) {
    const angle = (k / 8) * 2 * Math.PI + Math.PI / 8;
    const stretch = 0.85 + 0.3 * random();
    ring.push([lon + Math.cos(angle) * halfLon * stretch * 1.3, lat + Math.sin(angle) * halfLat * stretch * 1.3]);
  }
  ring.push(ring[0] as [number, number]);
  return [[ring]];
}

export function syntheticSurvey(random: () => number, index: number, lon: number, lat: number): Survey {
  const year = 2010 + Math.floor(random() * 16);
  const date = `${year}-${pad(1 + Math.floor(random() * 12))}-${pad(1 + Math.floor(random() * 28))}`;
  const hour = 22 + Math.floor(random() * 4);
  const assets: Survey['assets'] = {};
  const asset = (type: 'Vert' | 'TrueOrtho' | 'DetailDsm', gsd: number, kind: 'rgb' | 'elevation') => ({
    type,
    uri: `file:///data/surveys/bench-${pad(index, 7)}/v1/${type}.tif`,
    gsd,
    maxZoom: 21,
    minZoom: 12,
    bounds: { minX: 16_000_000 + index, minY: -3_000_000, maxX: 16_004_000 + index, maxY: -2_996_000 },
    width: 32768,
    height: 32768,
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
    id: `bench-${pad(index, 7)}`,
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

/** A uniform point in a disc (`radiusKm` around lon/lat). */
function inDisc(random: () => number, lon: number, lat: number, radiusKm: number): [number, number] {
  const r = radiusKm * Math.sqrt(random());
  const angle = 2 * Math.PI * random();
  return [lon + degLon(r * Math.cos(angle), lat), lat + degLat(r * Math.sin(angle))];
}

/** Each survey of the layout in turn (one pass; only their centres are kept, in the layout). */
export function* generate(layout: SyntheticCatalogue): Generator<Survey> {
  const random = seededRandom(SEED + 1);
  let index = 0;
  for (const city of layout.cities) {
    for (let k = 0; k < city.surveys; k++, index++) {
      // Survey centres stay inside the city's disc, so its points get the intended depth.
      const [lon, lat] = inDisc(random, city.lon, city.lat, Math.max(0, city.radiusKm - 1.5));
      layout.centres[2 * index] = lon;
      layout.centres[2 * index + 1] = lat;
      yield syntheticSurvey(random, index, lon, lat);
    }
  }
}

export function layoutFor(count: number): SyntheticCatalogue {
  const random = seededRandom(SEED);
  const cities: City[] = [];
  const sizes: { radiusKm: number; surveys: number }[] = [];
  for (let placed = 0; placed < count; ) {
    const radiusKm = 3 + 7 * random();
    const depth = 4 + 36 * random();
    const surveys = Math.min(
      count - placed,
      Math.max(1, Math.round((depth * Math.PI * radiusKm ** 2) / MEAN_FOOTPRINT_KM2)),
    );
    sizes.push({ radiusKm, surveys });
    placed += surveys;
  }
  const sideKm = Math.sqrt(sizes.length * KM2_PER_CITY);
  const halfLat = degLat(sideKm / 2);
  const halfLon = degLon(sideKm / 2, CENTRE.lat);
  for (const size of sizes) {
    const lon = CENTRE.lon + (2 * random() - 1) * halfLon;
    const lat = CENTRE.lat + (2 * random() - 1) * halfLat;
    cities.push({ lon, lat, ...size });
  }
  return { cities, centres: new Float64Array(2 * count), halfLat, halfLon };
}

/**
 * Query points: 90% near where imagery is (within 1 km of a random survey's centre, so big cities
 * get most of the traffic, as they do), 10% anywhere in the region (most of which has none).
 */
export function queryPoints(layout: SyntheticCatalogue, count: number, seed = 7): Array<[number, number]> {
  const random = seededRandom(seed);
  const surveys = layout.centres.length / 2;
  return Array.from({ length: count }, (): [number, number] => {
    if (random() < 0.1) {
      return [CENTRE.lon + (2 * random() - 1) * layout.halfLon, CENTRE.lat + (2 * random() - 1) * layout.halfLat];
    }
    const i = Math.floor(random() * surveys);
    return inDisc(random, layout.centres[2 * i] as number, layout.centres[2 * i + 1] as number, 1);
  });
}

/**
 * Writes `count` surveys through the catalogue's own `put` in one transaction (each put becomes a
 * savepoint), then ANALYZE. Written to a temporary name and renamed, so an interrupted build is
 * never mistaken for a finished one.
 */
export async function buildSyntheticCatalogue(path: string, count: number): Promise<SyntheticCatalogue> {
  const layout = layoutFor(count);
  await buildSqliteCatalogue(path, generate(layout));
  return layout;
}

/**
 * A SQLite catalogue file of these surveys, through SqliteSurveyCatalogue.put (which keeps its
 * indexes and groups), written under a temporary name and renamed only when complete.
 */
export async function buildSqliteCatalogue(path: string, surveys: Iterable<Survey>): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
  const db = openSqlite(partial);
  try {
    const catalogue = new SqliteSurveyCatalogue(db, () => new Date());
    // A new file nothing else reads, renamed only when complete: no journal, no fsync, and a cache
    // (1 GiB) that holds the R*Tree while it grows, so pages are written once, at the commit.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1048576');
    db.exec('BEGIN');
    for (const survey of surveys) await catalogue.put(survey);
    db.exec('COMMIT');
    db.exec('ANALYZE');
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
  // An older file's log beside the new one would be read as the new one's.
  for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  renameSync(partial, path);
}

/**
 * Whether a cached file holds all `count` surveys. A build whose pages were left in a write-ahead
 * log that did not follow the rename (a run killed while closing the file) leaves an empty file
 * under the finished name, which every query would silently answer with no match.
 */
function holdsSurveys(path: string, count: number): boolean {
  const db = openSqlite(path);
  try {
    return (db.prepare('SELECT count(*) AS n FROM surveys').get() as { n: number }).n === count;
  } catch {
    return false;
  } finally {
    db.close();
  }
}

/** The cached catalogue of `count` surveys under `dir` (built when missing or `fresh`), and its layout. */
export async function cachedCatalogue(
  dir: string,
  count: number,
  fresh: boolean,
): Promise<{ path: string; layout: SyntheticCatalogue; built: boolean; buildSeconds?: number }> {
  const path = `${dir}/catalogue-v${GENERATOR_VERSION}-${count}.sqlite`;
  if (existsSync(path) && !fresh && holdsSurveys(path, count)) {
    // The layout is cheap to regenerate; only the survey centres need one pass of the generator.
    const layout = layoutFor(count);
    for (const _ of generate(layout));
    return { path, layout, built: false };
  }
  const started = performance.now();
  const layout = await buildSyntheticCatalogue(path, count);
  return { path, layout, built: true, buildSeconds: (performance.now() - started) / 1000 };
}
