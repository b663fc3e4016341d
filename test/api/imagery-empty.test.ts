/**
 * An image with no pixels of the survey is a 404 NO_IMAGERY and bills nothing (issue 18): refused
 * from the catalogue's footprint before anything is rendered, or, near the footprint's edge, from
 * the rendered image before the transaction is recorded. A normal download is still billed once.
 * A real server over a small real survey (../shared/realdata/webodm, 212 x 212 px, about 100 m).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Survey } from '../../src/catalogue/survey.js';
import { multiPolygonBounds } from '../../src/geo/polygon.js';
import { lonLatToMercator } from '../../src/geo/web-mercator.js';
import { testClock } from '../support/clock.js';
import { REALDATA, SKIP_REALDATA, writeManifest } from '../support/fixtures.js';
import { type ApiFixture, createKey, errorBody, startApi } from './helpers.js';

const SIZE = 'size=64x64';

describe('no billing for an image with no pixels of the survey', { skip: SKIP_REALDATA }, () => {
  let api: ApiFixture;
  let survey: Survey;
  let key: string;
  let accountId: string;

  before(async () => {
    api = await startApi({ now: testClock().now });
    const manifest = await writeManifest(api.dir, 'webodm', {
      captureDate: '2020-06-01',
      assets: { TrueOrtho: join(REALDATA, 'webodm/orthophoto.tif') },
    });
    survey = await api.services.ingestor.ingestManifestFile(manifest);
    const created = await createKey(api.services, 'empty-images');
    key = created.key;
    accountId = created.account.id;
  });
  after(() => api.close());

  async function token(point: string, radius: number): Promise<{ token: string; total: number }> {
    const r = await api.get(
      `/staticmap/v2/coverage.json?apikey=${key}&point=${point}&radius=${radius}&resources=TrueOrtho`,
    );
    assert.equal(r.status, 200);
    const body = (await r.json()) as { transactionToken: string; total: number };
    return { token: body.transactionToken, total: body.total };
  }

  function image(file: string, t: string, point: string, radius: number): Promise<Response> {
    return api.get(
      `/staticmap/v2/surveys/${survey.id}/${file}?transactionToken=${t}&point=${point}&radius=${radius}&${SIZE}`,
    );
  }

  async function transactions(): Promise<number> {
    const usage = await api.services.accounts.usage(accountId);
    return usage.months.reduce((sum, month) => sum + month.transactions, 0);
  }

  const bounds = () => multiPolygonBounds(survey.footprint);

  test('far from the survey (the issue: point=10,10): 404 NO_IMAGERY for every format, nothing billed', async () => {
    const billed = await transactions();
    const far = await token('10,10', 50);
    assert.equal(far.total, 0);
    for (const file of ['TrueOrtho.png', 'TrueOrtho.jpg', 'TrueOrtho.tif', 'TrueOrtho.pgw', 'TrueOrtho.tfw']) {
      const r = await image(file, far.token, '10,10', 50);
      const body = await errorBody(r);
      assert.equal(r.status, 404, file);
      assert.equal(body.code, 'NO_IMAGERY', file);
      assert.equal(r.headers.get('server-timing')?.includes('render'), false, `${file}: nothing rendered`);
    }
    assert.equal(await transactions(), billed);
  });

  test('near the footprint edge with no pixels: the rendered image is checked before billing', async () => {
    // A footprint coarser than the pixels, as a simplified trace can be: the catalogue's
    // footprint and extent are widened 100 m to the east, so an AOI 80-120 m east of the data
    // meets the footprint ("maybe") while its image holds not one pixel.
    const b = bounds();
    const east = b.maxX + 100 / (111_320 * Math.cos((b.minY * Math.PI) / 180));
    const asset = survey.assets.TrueOrtho;
    assert.ok(asset);
    const widened: Survey = {
      ...survey,
      footprint: [
        [
          [
            [b.minX, b.minY],
            [east, b.minY],
            [east, b.maxY],
            [b.minX, b.maxY],
            [b.minX, b.minY],
          ],
        ],
      ],
      assets: { TrueOrtho: { ...asset, bounds: { ...asset.bounds, maxX: lonLatToMercator(east + 0.01, 0)[0] } } },
    };
    await api.services.catalogue.put(widened);
    const billed = await transactions();
    try {
      const point = `${east},${(b.minY + b.maxY) / 2}`;
      const edge = await token(point, 20);
      assert.equal(edge.total, 1, 'coverage lists the survey here');
      for (const file of ['TrueOrtho.png', 'TrueOrtho.jpg', 'TrueOrtho.tif']) {
        const r = await image(file, edge.token, point, 20);
        const body = await errorBody(r);
        assert.equal(r.status, 404, file);
        assert.equal(body.code, 'NO_IMAGERY', file);
      }
      assert.equal(await transactions(), billed);
    } finally {
      await api.services.catalogue.put(survey);
    }
  });

  test('an image with pixels is billed once, also across the edge and in every format', async () => {
    const b = bounds();
    const centre = `${(b.minX + b.maxX) / 2},${(b.minY + b.maxY) / 2}`;
    const billed = await transactions();
    const inside = await token(centre, 20);
    const first = await image('TrueOrtho.png', inside.token, centre, 20);
    assert.equal(first.status, 200);
    assert.equal(await transactions(), billed + 1);
    for (const file of ['TrueOrtho.tif', 'TrueOrtho.jpg', 'TrueOrtho.pgw']) {
      assert.equal((await image(file, inside.token, centre, 20)).status, 200, file);
    }
    assert.equal(await transactions(), billed + 1, 'later retrievals with the token are free');

    // Half off the east edge: near the footprint's edge, checked, and it has pixels.
    const edge = `${b.maxX},${(b.minY + b.maxY) / 2}`;
    const across = await token(edge, 20);
    for (const file of ['TrueOrtho.png', 'TrueOrtho.tif', 'TrueOrtho.jpg']) {
      assert.equal((await image(file, across.token, edge, 20)).status, 200, file);
    }
    assert.equal(await transactions(), billed + 2);
  });
});
