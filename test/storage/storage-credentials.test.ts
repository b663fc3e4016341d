/**
 * Object storage that refuses the server's credentials while it runs (issue 32, item 1): the S3
 * server (s3rver, a process of its own) revokes the access key nadir signs with, so every read is
 * a 403 InvalidAccessKeyId. Tiles and raster downloads not yet in any cache answer 503
 * STORAGE_UNAVAILABLE with Retry-After, never a 500; `/ready` says the storage is down; and all
 * comes back, without a restart, once the key is restored.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Survey } from '../../src/catalogue/survey.js';
import { multiPolygonBounds } from '../../src/geo/polygon.js';
import { type ApiFixture, createKey, startApi } from '../api/helpers.js';
import { tileGrid } from '../api/tiles-fixture.js';
import { testClock } from '../support/clock.js';
import { REALDATA, SKIP_REALDATA, tempDir, writeManifest } from '../support/fixtures.js';
import { type S3Server, startS3 } from '../support/servers.js';

const SURVEY_ID = '5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d';
const BOUND_MS = 5_000;

describe('object storage that refuses the credentials', { skip: SKIP_REALDATA, timeout: 180_000 }, () => {
  let s3: S3Server;
  let api: ApiFixture;
  let key: string;
  let survey: Survey;
  let scratch: { path: string; remove: () => Promise<void> };

  before(async () => {
    [s3, scratch] = await Promise.all([startS3('imagery'), tempDir('storage-credentials')]);
    api = await startApi({
      now: testClock().now,
      // No block cache: each tile asked for below reaches the store (a block held answers as the
      // tile caches do, whatever the store says since).
      env: {
        ...s3.env,
        NADIR_STORAGE: 's3://imagery/nadir',
        NADIR_STORAGE_TIMEOUT_MS: '3000',
        NADIR_STORAGE_CACHE_MB: '0',
      },
    });
    const manifest = await writeManifest(scratch.path, 'credentials', {
      id: SURVEY_ID,
      captureDate: '2021-07-02',
      assets: { Vert: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif') },
    });
    survey = await api.services.ingestor.ingestManifestFile(manifest);
    key = (await createKey(api.services, 'credentials')).key;
  });
  after(async () => {
    await api?.close();
    await s3?.stop();
    await scratch?.remove();
  });

  /** A tile of the survey at zoom z, at the centre of its asset. */
  function tilePath(z: number): string {
    const vert = survey.assets.Vert;
    assert.ok(vert);
    const { column, row } = tileGrid(z);
    return `/tiles/v3/Vert/${z}/${column((vert.bounds.minX + vert.bounds.maxX) / 2)}/${row((vert.bounds.minY + vert.bounds.maxY) / 2)}.png?apikey=${key}`;
  }

  async function download(radius: number): Promise<Response> {
    const box = multiPolygonBounds(survey.footprint);
    const [lon, lat] = [(box.minX + box.maxX) / 2, (box.minY + box.maxY) / 2];
    const coverage = await api.get(
      `/staticmap/v2/coverage.json?apikey=${key}&point=${lon},${lat}&radius=${radius}&resources=Vert`,
    );
    assert.equal(coverage.status, 200);
    const token = ((await coverage.json()) as { transactionToken: string }).transactionToken;
    return api.get(
      `/staticmap/v2/surveys/${SURVEY_ID}/Vert.png?transactionToken=${encodeURIComponent(token)}&point=${lon},${lat}&radius=${radius}&size=100x100`,
    );
  }

  async function unavailable(what: string, answer: () => Promise<Response>): Promise<void> {
    const started = performance.now();
    const response = await answer();
    const ms = performance.now() - started;
    const body = (await response.json()) as { code: string; error: string };
    assert.equal(response.status, 503, `${what}: ${response.status} ${JSON.stringify(body)}`);
    assert.equal(body.code, 'STORAGE_UNAVAILABLE', what);
    assert.match(response.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${what}: Retry-After`);
    assert.ok(ms < BOUND_MS, `${what} took ${ms.toFixed(0)} ms`);
  }

  it('a revoked key: tiles and downloads 503 STORAGE_UNAVAILABLE, /ready says so; back when restored', async () => {
    const vert = survey.assets.Vert;
    assert.ok(vert);
    assert.equal((await api.get(tilePath(vert.maxZoom))).status, 200, 'the fixture is sound');
    assert.equal((await download(10)).status, 200);
    await s3.revokeKeys();
    try {
      await unavailable('a tile not read before', () => api.get(tilePath(vert.maxZoom - 1)));
      await unavailable('a raster download', () => download(30));
      const ready = await api.get('/ready');
      assert.equal(ready.status, 503);
      assert.equal(((await ready.json()) as { engines: { storage: string } }).engines.storage, 'down');
    } finally {
      await s3.restoreKeys();
    }
    assert.equal((await api.get(tilePath(vert.maxZoom - 2))).status, 200);
    assert.equal((await download(31)).status, 200);
    assert.equal((await api.get('/ready')).status, 200);
    assert.deepEqual(
      api.logs.filter((line) => line.includes('"statusCode":500')),
      [],
    );
  });
});
