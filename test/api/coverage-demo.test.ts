/** Coverage over the demo town, through a real server, with the demo account's key. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEMO_LANDMARKS } from '@nadir/demo-town';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/api/server.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { testClock } from '../support/clock.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';

interface CoverageBody {
  surveys: { id: string; captureDate: string; pixelSizes: Record<string, number>; tags: string[] }[];
  total: number;
  transactionToken: string;
}

function landmark(id: string) {
  const found = DEMO_LANDMARKS.find((l) => l.id === id);
  if (!found) throw new Error(`no landmark ${id}`);
  return found;
}

describe('coverage over the demo town', () => {
  let town: DemoTown;
  let services: Services;
  let app: FastifyInstance;
  let base: string;

  before(async () => {
    town = await demoTown();
    services = await createServices(
      parseConfig({ NADIR_DATA_DIR: town.dataDir, NADIR_LOG_LEVEL: 'silent' }, town.dataDir),
      testClock().now,
    );
    app = await buildServer(services);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
    await services.close();
  });

  async function coverage(lon: number, lat: number, extra = ''): Promise<CoverageBody> {
    const url = `${base}/staticmap/v2/coverage.json?apikey=${town.apiKey}&point=${lon},${lat}&radius=20&resources=TrueOrtho,DetailDsm,Vert${extra}`;
    const response = await fetch(url);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as CoverageBody;
  }

  test('the red store is in all three surveys, newest first, with each type at its GSD', async () => {
    const store = landmark('red-roof-store');
    const body = await coverage(store.lon, store.lat);
    assert.deepEqual(
      body.surveys.map((s) => s.captureDate),
      ['2025-10-20', '2025-04-02', '2024-03-14'],
    );
    assert.equal(body.total, 3);
    for (const survey of body.surveys) {
      assert.ok(Math.abs((survey.pixelSizes.TrueOrtho ?? 0) - 0.15) < 0.002, JSON.stringify(survey.pixelSizes));
      assert.ok(Math.abs((survey.pixelSizes.Vert ?? 0) - 0.15) < 0.002);
      assert.ok(Math.abs((survey.pixelSizes.DetailDsm ?? 0) - 0.3) < 0.004);
    }
    assert.deepEqual(body.surveys[0]?.tags, ['disaster:hurricane']);
    assert.ok(body.transactionToken.length > 100);
  });

  test('the pond lies outside the hurricane survey footprint', async () => {
    const pond = landmark('pond');
    const body = await coverage(pond.lon, pond.lat);
    assert.deepEqual(
      body.surveys.map((s) => s.captureDate),
      ['2025-04-02', '2024-03-14'],
    );
  });

  test('since and until select by capture date (inclusive)', async () => {
    const store = landmark('red-roof-store');
    const since = await coverage(store.lon, store.lat, '&since=2025-04-02');
    assert.deepEqual(
      since.surveys.map((s) => s.captureDate),
      ['2025-10-20', '2025-04-02'],
    );
    const until = await coverage(store.lon, store.lat, '&until=2025-04-01');
    assert.deepEqual(
      until.surveys.map((s) => s.captureDate),
      ['2024-03-14'],
    );
  });

  test('a point a few kilometres away has no coverage, and still gets a token', async () => {
    const body = await coverage(-85.46, 29.93);
    assert.equal(body.total, 0);
    assert.deepEqual(body.surveys, []);
    assert.ok(body.transactionToken);
  });
});
