/**
 * A server over the demo town's files with a catalogue of its own: the three demo surveys, plus
 * one without DetailDsm (a copy of the hurricane survey's other layers), so refusals can be
 * tested without touching the shared demo catalogue other test files read.
 */
import assert from 'node:assert/strict';
import { DEMO_SURVEYS, DEMO_TOWN_ORIGIN_UTM, utmToLonLat } from '@nadir/demo-town';
import type { Survey } from '../../src/catalogue/survey.js';
import { type ApiFixture, createKey, startApi } from '../api/helpers.js';
import { demoTown } from '../support/demo-town.js';
import { servicesFor } from '../support/fixtures.js';

export const [OLDEST, BEFORE, HURRICANE] = DEMO_SURVEYS.map((survey) => survey.id) as [string, string, string];
/** The hurricane survey's imagery without its DetailDsm, captured later still. */
export const NO_DSM = 'c4a2e0f1-0000-4000-8000-00000000d5a0';

export interface ChangeTown {
  api: ApiFixture;
  apiKey: string;
  accountId: string;
  /** The demo's data folder: where GDAL finds the COGs for references. */
  dataDir: string;
  surveys: Map<string, Survey>;
  close(): Promise<void>;
}

export async function changeTown(): Promise<ChangeTown> {
  const town = await demoTown();
  const demo = await servicesFor(town.dataDir);
  const surveys = new Map<string, Survey>();
  try {
    for (const id of [OLDEST, BEFORE, HURRICANE]) {
      const survey = await demo.catalogue.get(id);
      assert.ok(survey?.assets.DetailDsm, `demo survey ${id} with DetailDsm`);
      surveys.set(id, survey);
    }
  } finally {
    await demo.close();
  }
  const hurricane = surveys.get(HURRICANE) as Survey;
  const { DetailDsm: _, ...imagery } = hurricane.assets;
  surveys.set(NO_DSM, {
    ...hurricane,
    id: NO_DSM,
    captureDate: '2025-11-02',
    lastPhotoTime: '2025-11-02T16:00:00.000Z',
    assets: imagery,
  });

  const api = await startApi({ env: { NADIR_STORAGE: town.dataDir, NADIR_LOG_LEVEL: 'warn' } });
  for (const survey of surveys.values()) await api.services.catalogue.put(survey);
  const { key, account } = await createKey(api.services, 'change');
  return { api, apiKey: key, accountId: account.id, dataDir: town.dataDir, surveys, close: () => api.close() };
}

/** WGS84 of a place given in the demo's local metres (east, north of the town centre). */
export function lonLatOfLocal(x: number, y: number): { lon: number; lat: number } {
  const [lon, lat] = utmToLonLat(DEMO_TOWN_ORIGIN_UTM.easting + x, DEMO_TOWN_ORIGIN_UTM.northing + y);
  return { lon, lat };
}

/** A transaction token for the AOI, from the coverage endpoint as a client gets it. */
export async function tokenFor(town: ChangeTown, lon: number, lat: number, radius: number): Promise<string> {
  const response = await town.api.get(
    `/staticmap/v2/coverage.json?apikey=${town.apiKey}&point=${lon},${lat}&radius=${radius}&resources=DetailDsm`,
  );
  assert.equal(response.status, 200);
  return ((await response.json()) as { transactionToken: string }).transactionToken;
}

export interface ChangeRequest {
  after: string;
  baseline?: string;
  lon: number;
  lat: number;
  radius: number;
  size: number;
  token: string;
  file?: string;
  extra?: Record<string, string>;
}

export function changeUrl(request: ChangeRequest): string {
  const query = new URLSearchParams({
    transactionToken: request.token,
    point: `${request.lon},${request.lat}`,
    radius: String(request.radius),
    size: `${request.size}x${request.size}`,
    ...(request.baseline ? { baseline: request.baseline } : {}),
    ...request.extra,
  });
  return `/staticmap/v2/surveys/${request.after}/${request.file ?? 'DsmChange.tif'}?${query}`;
}
