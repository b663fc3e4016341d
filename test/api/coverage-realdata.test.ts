import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Survey } from '../../src/catalogue/survey.js';
import { multiPolygonBounds } from '../../src/geo/polygon.js';
import { type ApiFixture, createKey, REALDATA, realdataMissing, startApi } from './helpers.js';

/**
 * Coverage over a real survey: the Wisconsin orthophoto + DSM pair (fieldimager-ws5, about
 * 107 x 110 m around 44.1188 N, 89.5417 W) ingested through the real pipeline.
 */

const SURVEY_ID = '6f1c2a9e-3b4d-4c5e-8f70-1a2b3c4d5e6f';

interface CoverageBody {
  surveys: Array<{ id: string; captureDate: string; pixelSizes: Record<string, number> }>;
  total: number;
  transactionToken: string;
}

describe('coverage over ingested real rasters', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let key: string;
  let survey: Survey;
  let centre: { lon: number; lat: number };

  before(async () => {
    api = await startApi();
    key = (await createKey(api.services, 'acme')).key;
    const manifest = join(api.dir, 'wisconsin.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        id: SURVEY_ID,
        captureDate: '2019-07-09',
        timezone: 'America/Chicago',
        tags: ['agriculture'],
        assets: {
          TrueOrtho: join(REALDATA, 'fieldimager-ws5', 'odm_orthophoto.tif'),
          DetailDsm: join(REALDATA, 'fieldimager-ws5', 'dsm.tif'),
        },
      }),
    );
    survey = await api.services.ingestor.ingestManifestFile(manifest);
    const box = multiPolygonBounds(survey.footprint);
    centre = { lon: (box.minX + box.maxX) / 2, lat: (box.minY + box.maxY) / 2 };
  });
  after(() => api.close());

  async function coverage(query: string, point = `${centre.lon},${centre.lat}`): Promise<CoverageBody> {
    const response = await api.get(`/staticmap/v2/coverage.json?apikey=${key}&point=${point}&${query}`);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as CoverageBody;
  }

  it('ingested where the README says', () => {
    assert.ok(Math.abs(centre.lat - 44.1188) < 0.002, `lat ${centre.lat}`);
    assert.ok(Math.abs(centre.lon + 89.5417) < 0.002, `lon ${centre.lon}`);
  });

  it('finds the survey at its centre with the pixel sizes of both rasters', async () => {
    const body = await coverage('radius=20&resources=TrueOrtho,DetailDsm');
    assert.equal(body.total, 1);
    const [found] = body.surveys;
    assert.equal(found?.id, SURVEY_ID);
    assert.equal(found?.captureDate, '2019-07-09');
    assert.ok(Math.abs((found?.pixelSizes.TrueOrtho ?? 0) - 0.2) < 0.02, JSON.stringify(found?.pixelSizes));
    assert.ok(Math.abs((found?.pixelSizes.DetailDsm ?? 0) - 0.27) < 0.03, JSON.stringify(found?.pixelSizes));
  });

  it('overlap=full: a small AOI inside the footprint matches, a 200 m one does not', async () => {
    assert.equal((await coverage('radius=20&resources=TrueOrtho&overlap=full')).total, 1);
    assert.equal((await coverage('radius=100&resources=TrueOrtho&overlap=full')).total, 0);
    assert.equal((await coverage('radius=100&resources=TrueOrtho')).total, 1);
  });

  it('a point a kilometre away finds nothing but still gets a token', async () => {
    const body = await coverage('radius=100&resources=TrueOrtho', `${centre.lon + 0.013},${centre.lat}`);
    assert.equal(body.total, 0);
    assert.ok(body.transactionToken);
  });

  it('type and date filters apply to the real survey', async () => {
    assert.equal((await coverage('radius=20&resources=Vert')).total, 0);
    assert.equal((await coverage('radius=20&resources=Vert,DetailDsm&filter=anyTypes')).total, 1);
    assert.equal((await coverage('radius=20&resources=TrueOrtho&since=2019-07-10')).total, 0);
    assert.equal((await coverage('radius=20&resources=TrueOrtho&until=2019-07-09')).total, 1);
  });
});
