/**
 * GET /staticmap/v2/surveys/{surveyId}/{type}.{format} through a real server: formats opened
 * with GDAL, world files, every token and billing case, and admission control.
 * (Pixel values against gdalwarp are checked on the engine itself: test/raster/.)
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RasterEngine } from '../../src/raster/index.js';
import { testClock } from '../support/clock.js';
import { gdalinfo, REALDATA, SKIP_REALDATA, writeManifest } from '../support/fixtures.js';
import { type ApiFixture, createKey, startApi } from './helpers.js';

const POINT = { lon: -89.54165, lat: 44.11885 };
const DAY = 86_400_000;

/** The AOI square in EPSG:3857, computed here from first principles (not src/geo). */
function expectedTransform(lon: number, lat: number, radius: number, size: number): number[] {
  const R = 6378137;
  const x = (lon * Math.PI * R) / 180;
  const y = R * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
  const half = radius / Math.cos((lat * Math.PI) / 180);
  const pixel = (2 * half) / size;
  return [x - half, pixel, 0, y + half, 0, -pixel];
}

describe('imagery downloads', { skip: SKIP_REALDATA }, () => {
  let api: ApiFixture;
  const clock = testClock();
  let surveyId: string;
  let key: string;
  let accountId: string;

  before(async () => {
    api = await startApi({ now: clock.now });
    const manifest = await writeManifest(api.dir, 'wisconsin', {
      captureDate: '2021-07-02',
      assets: {
        TrueOrtho: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif'),
        DetailDsm: join(REALDATA, 'fieldimager-ws5/dsm.tif'),
      },
    });
    surveyId = (await api.services.ingestor.ingestManifestFile(manifest)).id;
    const created = await createKey(api.services, 'imagery');
    key = created.key;
    accountId = created.account.id;
  });
  after(() => api.close());

  async function token(radius = 40, point = POINT, apiKey = key): Promise<string> {
    const r = await api.get(
      `/staticmap/v2/coverage.json?apikey=${apiKey}&point=${point.lon},${point.lat}&radius=${radius}&resources=TrueOrtho`,
    );
    assert.equal(r.status, 200);
    return ((await r.json()) as { transactionToken: string }).transactionToken;
  }

  function image(file: string, t: string, extra: Record<string, string> = {}): Promise<Response> {
    const query = new URLSearchParams({
      transactionToken: t,
      point: `${POINT.lon},${POINT.lat}`,
      radius: '40',
      size: '400x400',
      ...extra,
    });
    return api.get(`/staticmap/v2/surveys/${surveyId}/${file}?${query}`);
  }

  async function saved(response: Response, name: string): Promise<string> {
    const path = join(api.dir, name);
    await writeFile(path, Buffer.from(await response.arrayBuffer()));
    return path;
  }

  async function transactions(): Promise<number> {
    const usage = await api.services.accounts.usage(accountId);
    return usage.months.reduce((sum, m) => sum + m.transactions, 0);
  }

  test('TrueOrtho tif: EPSG:3857 over the AOI square, RGB + alpha, tiled DEFLATE', async () => {
    const r = await image('TrueOrtho.tif', await token());
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'image/tiff');
    assert.match(r.headers.get('content-disposition') ?? '', new RegExp(`filename="${surveyId}_TrueOrtho.tif"`));
    const info = await gdalinfo(await saved(r, 'ortho.tif'));
    assert.match(info.coordinateSystem?.wkt ?? '', /ID\["EPSG",3857\]\]$/);
    assert.deepEqual(info.size, [400, 400]);
    const expected = expectedTransform(POINT.lon, POINT.lat, 40, 400);
    info.geoTransform.forEach((v, i) => {
      assert.ok(Math.abs(v - (expected[i] as number)) < 1e-6, `gt[${i}] ${v}`);
    });
    assert.deepEqual(
      info.bands.map((b) => b.colorInterpretation),
      ['Red', 'Green', 'Blue', 'Alpha'],
    );
    assert.ok(info.bands.every((b) => b.type === 'Byte'));
    assert.equal(info.metadata.IMAGE_STRUCTURE?.COMPRESSION, 'DEFLATE');
    assert.deepEqual(info.bands[0]?.block, [256, 256]);
  });

  test('DetailDsm tif: one Float32 band with nodata', async () => {
    const r = await image('DetailDsm.tif', await token(), { size: '300x300' });
    assert.equal(r.status, 200);
    const info = await gdalinfo(await saved(r, 'dsm.tif'), '-stats');
    assert.equal(info.bands.length, 1);
    assert.equal(info.bands[0]?.type, 'Float32');
    assert.equal(info.bands[0]?.noDataValue, -9999);
    assert.ok(
      (info.bands[0]?.minimum ?? 0) > 270 && (info.bands[0]?.maximum ?? 0) < 280,
      'heights of the field, metres',
    );
  });

  for (const [file, type, bands] of [
    ['TrueOrtho.jpg', 'image/jpeg', 3],
    ['TrueOrtho.png', 'image/png', 4],
    ['DetailDsm.jpg', 'image/jpeg', 3],
    ['DetailDsm.png', 'image/png', 4],
  ] as const) {
    test(`${file}: ${type} with ${bands} bands`, async () => {
      const r = await image(file, await token());
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), type);
      const info = await gdalinfo(await saved(r, file));
      assert.deepEqual(info.size, [400, 400]);
      assert.equal(info.bands.length, bands);
    });
  }

  test('world files describe exactly the tif grid, at pixel centres', async () => {
    const t = await token();
    const info = await gdalinfo(await saved(await image('TrueOrtho.tif', t), 'grid.tif'));
    const [x0, px, , y0, , py] = info.geoTransform;
    for (const file of ['TrueOrtho.tfw', 'TrueOrtho.jgw', 'DetailDsm.pgw']) {
      const r = await image(file, t);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type')?.split(';')[0], 'text/plain');
      const lines = (await r.text()).trim().split(/\r?\n/).map(Number);
      assert.equal(lines.length, 6);
      const expected = [px, 0, 0, py, x0 + px / 2, y0 + py / 2];
      lines.forEach((v, i) => {
        assert.ok(Math.abs(v - (expected[i] as number)) < 1e-6, `${file} line ${i + 1}: ${v}`);
      });
    }
  });

  test('tokens: tampered, another point, a larger radius, revoked key, subscription off, expired', async () => {
    const t = await token();
    const flipped = `${t.slice(0, -5)}${t.at(-5) === 'A' ? 'B' : 'A'}${t.slice(-4)}`;
    const cases: [string, Promise<Response>][] = [
      ['tampered', image('TrueOrtho.png', flipped)],
      ['point moved 1e-6', image('TrueOrtho.png', t, { point: `${POINT.lon + 1e-6},${POINT.lat}` })],
      ['radius larger', image('TrueOrtho.png', t, { radius: '41' })],
    ];
    for (const [name, pending] of cases) {
      const r = await pending;
      assert.equal(r.status, 403, name);
      assert.equal(((await r.json()) as { code: string }).code, 'TRANSACTION_TOKEN_INVALID', name);
    }
    assert.equal(
      (await image('TrueOrtho.png', t, { radius: '20', size: '64x64' })).status,
      200,
      'a smaller radius is inside the AOI',
    );

    const other = await createKey(api.services, 'imagery-revoked');
    const revokedToken = await token(40, POINT, other.key);
    await api.services.accounts.revokeApiKey(other.keyId);
    assert.equal((await image('TrueOrtho.png', revokedToken)).status, 403);

    const cancelled = await createKey(api.services, 'imagery-cancelled');
    const cancelledToken = await token(40, POINT, cancelled.key);
    await api.services.accounts.setRasterSubscription(cancelled.account.id, false);
    assert.equal((await image('TrueOrtho.png', cancelledToken)).status, 403);

    const old = await token();
    clock.advance(31 * DAY);
    try {
      const r = await image('TrueOrtho.png', old);
      assert.equal(r.status, 403);
      assert.match(((await r.json()) as { error: string }).error, /expired/);
    } finally {
      clock.advance(-31 * DAY);
    }
  });

  test('unknown survey and missing type: 404', async () => {
    const t = await token();
    const unknown = await api.get(
      `/staticmap/v2/surveys/00000000-0000-4000-8000-000000000000/TrueOrtho.tif?transactionToken=${encodeURIComponent(t)}&point=${POINT.lon},${POINT.lat}&radius=40&size=10x10`,
    );
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { code: string }).code, 'SURVEY_NOT_FOUND');
    const vert = await image('Vert.tif', t);
    assert.equal(vert.status, 404);
    assert.equal(((await vert.json()) as { code: string }).code, 'CONTENT_NOT_FOUND');
  });

  test('bad size, type, format and missing parameters: 400 naming the parameter', async () => {
    const t = await token();
    const cases: [string, Record<string, string>, string][] = [
      ['TrueOrtho.tif', { size: '0x0' }, 'size'],
      ['TrueOrtho.tif', { size: '100x200' }, 'size'],
      ['TrueOrtho.tif', { size: '5001x5001' }, 'size'],
      ['TrueOrtho.tif', { size: 'big' }, 'size'],
      ['TrueOrtho.gif', {}, 'format'],
      ['Ortho.tif', {}, 'type'],
      ['TrueOrtho.tif', { radius: '0' }, 'radius'],
      ['TrueOrtho.tif', { point: '200,44' }, 'point'],
    ];
    for (const [file, extra, parameter] of cases) {
      const r = await image(file, t, extra);
      assert.equal(r.status, 400, `${file} ${JSON.stringify(extra)}`);
      const body = (await r.json()) as { code: string; parameter: string };
      assert.equal(body.code, 'INVALID_PARAMETER');
      assert.equal(body.parameter, parameter);
    }
    const missing = await api.get(
      `/staticmap/v2/surveys/${surveyId}/TrueOrtho.tif?point=${POINT.lon},${POINT.lat}&radius=40&size=10x10`,
    );
    assert.equal(missing.status, 400);
    assert.equal(((await missing.json()) as { parameter: string }).parameter, 'transactionToken');
  });

  test('billing: one transaction per token, 50 concurrent first requests count once, failures never', async () => {
    const before = await transactions();
    const t = await token(30);
    const bad = await image('TrueOrtho.png', t, { radius: '30', size: '7x9' });
    assert.equal(bad.status, 400);
    assert.equal(await transactions(), before, 'a failed request is not billed');
    const burst = await Promise.all(
      Array.from({ length: 50 }, () => image('TrueOrtho.png', t, { radius: '30', size: '32x32' })),
    );
    assert.deepEqual(new Set(burst.map((r) => r.status)), new Set([200]));
    assert.equal(await transactions(), before + 1, 'the token counted exactly once');
    assert.equal((await image('DetailDsm.tif', t, { radius: '30', size: '32x32' })).status, 200);
    assert.equal(await transactions(), before + 1, 'later images with the token are free');
  });

  test('allowance: a new transaction beyond it is 403 ALLOWANCE_EXCEEDED and not counted', async () => {
    const small = await createKey(api.services, 'imagery-allowance');
    await api.services.accounts.setMonthlyAllowance(small.account.id, 1);
    const first = await token(40, POINT, small.key);
    assert.equal((await image('TrueOrtho.png', first, { size: '16x16' })).status, 200);
    const second = await token(35, POINT, small.key);
    const refused = await image('TrueOrtho.png', second, { radius: '35', size: '16x16' });
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { code: string }).code, 'ALLOWANCE_EXCEEDED');
    const usage = await api.services.accounts.usage(small.account.id);
    assert.equal(usage.months[0]?.transactions, 1);
    assert.equal((await image('TrueOrtho.png', first, { size: '16x16' })).status, 200, 'the billed token still works');
  });

  test('billing months: 23:59:59 UTC on the last day and 00:00:00 on the first count against two allowances', async () => {
    const boundaries = [
      ['2026-11-30T23:59:59.000Z', '2026-12-01T00:00:00.000Z', '2026-11', '2026-12'],
      ['2026-12-31T23:59:59.000Z', '2027-01-01T00:00:00.000Z', '2026-12', '2027-01'],
      ['2028-02-29T23:59:59.000Z', '2028-03-01T00:00:00.000Z', '2028-02', '2028-03'],
    ] as const;
    const started = clock.now();
    try {
      for (const [last, first, lastMonth, firstMonth] of boundaries) {
        const account = await createKey(api.services, `imagery-month-${lastMonth}`);
        await api.services.accounts.setMonthlyAllowance(account.account.id, 1);
        clock.set(last);
        const late = await token(40, POINT, account.key);
        const early = await token(35, POINT, account.key);
        assert.equal((await image('TrueOrtho.png', late, { size: '16x16' })).status, 200, `billed in ${lastMonth}`);
        const full = await image('TrueOrtho.png', early, { radius: '35', size: '16x16' });
        assert.equal(full.status, 403, `${lastMonth}'s allowance of 1 is used up at ${last}`);
        assert.equal(((await full.json()) as { code: string }).code, 'ALLOWANCE_EXCEEDED');
        clock.set(first);
        const next = await image('TrueOrtho.png', early, { radius: '35', size: '16x16' });
        assert.equal(next.status, 200, `one second later, ${firstMonth} has its own allowance`);
        assert.deepEqual((await api.services.accounts.usage(account.account.id)).months, [
          { month: lastMonth, transactions: 1, tiles: 0 },
          { month: firstMonth, transactions: 1, tiles: 0 },
        ]);
      }
    } finally {
      clock.set(started);
    }
  });
});

describe('imagery admission control', { skip: SKIP_REALDATA }, () => {
  let api: ApiFixture;

  before(async () => {
    // A budget far below one request: the first runs alone, anything arriving meanwhile is refused.
    api = await startApi({
      adjust: (services) => ({
        ...services,
        raster: new RasterEngine({
          storage: services.storage,
          admission: { budget: 1, maxWaitMs: 0 },
        }),
      }),
    });
  });
  after(() => api.close());

  test('beyond the pixel budget: 503 OVERLOADED with Retry-After, then it recovers', async () => {
    const manifest = await writeManifest(api.dir, 'w', {
      captureDate: '2021-07-02',
      assets: { TrueOrtho: join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif') },
    });
    const id = (await api.services.ingestor.ingestManifestFile(manifest)).id;
    const { key } = await createKey(api.services, 'admission');
    const cov = await api.get(
      `/staticmap/v2/coverage.json?apikey=${key}&point=${POINT.lon},${POINT.lat}&radius=50&resources=TrueOrtho`,
    );
    const t = ((await cov.json()) as { transactionToken: string }).transactionToken;
    // Four different images: the same one asked four times is one render (a file read in pieces).
    const url = (size: number) =>
      `/staticmap/v2/surveys/${id}/TrueOrtho.tif?transactionToken=${encodeURIComponent(t)}&point=${POINT.lon},${POINT.lat}&radius=50&size=${size}x${size}`;
    const responses = await Promise.all([2000, 1999, 1998, 1997].map((size) => api.get(url(size))));
    const statuses = responses.map((r) => r.status);
    assert.ok(statuses.includes(200), `one runs: ${statuses}`);
    const refused = responses.find((r) => r.status === 503);
    assert.ok(refused, `the others are refused: ${statuses}`);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(((await refused.json()) as { code: string }).code, 'OVERLOADED');
    assert.equal((await api.get(url(1996))).status, 200, 'served again once the budget is free');
  });
});
