/**
 * Tile requests that must fail, and how: every bad input is a JSON 400/401/404/429 with the
 * rate-limit headers; usage is counted for tiles served and written in batches.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Survey } from '../../src/catalogue/survey.js';
import { planTile } from '../../src/tiles/planner.js';
import { type ApiFixture, createKey, errorBody, realdataMissing, startApi } from './helpers.js';
import { ingestRealdataSurvey } from './tiles-fixture.js';

const NOW = new Date('2026-11-22T12:00:00Z');

describe('tile errors, rate limits and usage', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let key: string;
  let accountId: string;
  let survey: Survey;
  let inside: string;

  before(async () => {
    api = await startApi({ now: () => NOW });
    const created = await createKey(api.services, 'tiles');
    key = created.key;
    accountId = created.account.id;
    survey = await ingestRealdataSurvey(api.services, api.dir, 'webodm/orthophoto.tif', {
      id: '5a1d7c3e-0b6f-4e2a-9c84-3f0e1d2b4a60',
      captureDate: '2025-06-01',
    });
    const asset = survey.assets.Vert;
    assert.ok(asset);
    // The middle of the asset at its native zoom: the footprint (an octagon) covers it.
    const z = asset.maxZoom;
    const size = (2 * 20037508.342789244) / 2 ** z;
    const x = Math.floor(((asset.bounds.minX + asset.bounds.maxX) / 2 + 20037508.342789244) / size);
    const y = Math.floor((20037508.342789244 - (asset.bounds.minY + asset.bounds.maxY) / 2) / size);
    inside = `${z}/${x}/${y}`;
  });
  after(async () => api.close());

  test('a tile of the survey is served on both endpoints (the fixture is sound)', async () => {
    for (const path of [`/tiles/v3/Vert/${inside}.jpg`, `/tiles/v3/surveys/${survey.id}/Vert/${inside}.jpg`]) {
      const r = await api.get(`${path}?apikey=${key}`);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers.get('content-type'), 'image/jpeg');
      assert.equal(r.headers.get('x-survey-ids'), survey.id);
    }
  });

  const badRequests: [string, string, number, string, string?][] = [
    ['unknown content type', '/tiles/v3/vert/{tile}.jpg', 400, 'INVALID_PARAMETER', 'contentType'],
    ['Panorama is not a tile layer', '/tiles/v3/Panorama/{tile}.jpg', 400, 'INVALID_PARAMETER', 'contentType'],
    ['unknown format', '/tiles/v3/Vert/{tile}.gif', 400, 'INVALID_PARAMETER', 'format'],
    ['upper-case format', '/tiles/v3/Vert/{tile}.JPG', 400, 'INVALID_PARAMETER', 'format'],
    ['no format', '/tiles/v3/Vert/{z}/{x}/{y}', 400, 'INVALID_PARAMETER', 'format'],
    ['z above 24', '/tiles/v3/Vert/25/0/0.jpg', 400, 'INVALID_PARAMETER', 'z'],
    ['negative z', '/tiles/v3/Vert/-1/0/0.jpg', 400, 'INVALID_PARAMETER', 'z'],
    ['fractional z', '/tiles/v3/Vert/1.5/0/0.jpg', 400, 'INVALID_PARAMETER', 'z'],
    ['x beyond 2^z - 1', '/tiles/v3/Vert/3/8/0.jpg', 400, 'INVALID_PARAMETER', 'x'],
    ['y beyond 2^z - 1', '/tiles/v3/Vert/3/0/8.jpg', 400, 'INVALID_PARAMETER', 'y'],
    ['x not a number', '/tiles/v3/Vert/3/a/0.jpg', 400, 'INVALID_PARAMETER', 'x'],
    ['y in hex', '/tiles/v3/Vert/3/0/0x1.jpg', 400, 'INVALID_PARAMETER', 'y'],
    ['huge x', '/tiles/v3/Vert/3/99999999999999999999/0.jpg', 400, 'INVALID_PARAMETER', 'x'],
    ['bad since', '/tiles/v3/Vert/{tile}.jpg?since=yesterday', 400, 'INVALID_PARAMETER', 'since'],
    ['impossible date', '/tiles/v3/Vert/{tile}.jpg?until=2025-02-30', 400, 'INVALID_PARAMETER', 'until'],
    [
      'since after until',
      '/tiles/v3/Vert/{tile}.jpg?since=2025-01-01&until=2024-01-01',
      400,
      'INVALID_PARAMETER',
      'since',
    ],
    ['malformed tag', '/tiles/v3/Vert/{tile}.jpg?include=disaster:', 400, 'INVALID_PARAMETER', 'include'],
    ['empty tag list entry', '/tiles/v3/Vert/{tile}.jpg?exclude=a,,b', 400, 'INVALID_PARAMETER', 'exclude'],
    ['unknown mosaic', '/tiles/v3/Vert/{tile}.jpg?mosaic=oldest', 400, 'INVALID_PARAMETER', 'mosaic'],
    [
      'repeated since',
      '/tiles/v3/Vert/{tile}.jpg?since=2020-01-01&since=2021-01-01',
      400,
      'INVALID_PARAMETER',
      'since',
    ],
    [
      'unknown survey',
      '/tiles/v3/surveys/00000000-0000-4000-8000-000000000000/Vert/{tile}.jpg',
      404,
      'SURVEY_NOT_FOUND',
    ],
    ['not a survey id', '/tiles/v3/surveys/..%2F..%2Fetc/Vert/{tile}.jpg', 404, 'SURVEY_NOT_FOUND'],
    ['survey without that layer', '/tiles/v3/surveys/{survey}/East/{tile}.jpg', 404, 'CONTENT_NOT_FOUND'],
    [
      'survey outside the date filter',
      '/tiles/v3/surveys/{survey}/Vert/{tile}.jpg?until=2025-01-01',
      404,
      'NO_IMAGERY',
    ],
    ['missing tile segment', '/tiles/v3/Vert/3/0', 404, 'NOT_FOUND'],
  ];

  for (const [name, template, status, code, parameter] of badRequests) {
    test(`${name} -> ${status} ${code}`, async () => {
      const [z, x, y] = inside.split('/');
      const path = template
        .replace('{tile}', inside)
        .replace('{z}', z as string)
        .replace('{x}', x as string)
        .replace('{y}', y as string)
        .replace('{survey}', survey.id);
      const r = await api.get(`${path}${path.includes('?') ? '&' : '?'}apikey=${key}`);
      assert.equal(r.status, status, `${path}: ${r.status}`);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      const body = await errorBody(r);
      assert.equal(body.code, code, body.error);
      if (parameter) assert.equal(body.parameter, parameter, body.error);
      assert.ok(!body.error.includes(key), 'the key is never echoed');
      if (status !== 404 || code !== 'NOT_FOUND') assert.ok(r.headers.get('x-ratelimit-limit'), 'rate-limit headers');
      assert.equal(r.headers.get('cache-control'), code === 'NO_IMAGERY' ? 'public, max-age=86400' : null);
    });
  }

  test('since and until take any date from year 0001 (and not year 0000)', async () => {
    for (const path of [`/tiles/v3/Vert/${inside}.jpg`, `/tiles/v3/surveys/${survey.id}/Vert/${inside}.jpg`]) {
      const since = await api.get(`${path}?since=0001-01-01&apikey=${key}`);
      assert.equal(since.status, 200, `${path} since=0001-01-01`);
      await since.arrayBuffer();
      const until = await api.get(`${path}?until=0004-02-29&apikey=${key}`);
      assert.equal((await errorBody(until)).code, 'NO_IMAGERY', `${path} until=0004-02-29`);
      const zero = await api.get(`${path}?since=0000-12-31&apikey=${key}`);
      assert.equal((await errorBody(zero)).parameter, 'since');
    }
  });

  test('a tile whose client went away is not composited or encoded', async () => {
    const [z, x, y] = inside.split('/').map(Number) as [number, number, number];
    const candidates = await api.services.tileEngine.candidates.find({ z, x, y }, { type: 'Vert', order: 'newest' });
    const plan = planTile({ z, x, y }, candidates);
    assert.ok((await api.services.tileEngine.renderer.render(plan, 'png', 90)) !== undefined, 'renders when wanted');
    await assert.rejects(
      api.services.tileEngine.renderer.render(plan, 'png', 90, () => true),
      { name: 'AbortError' },
    );
    // Over HTTP: requests abandoned mid-flight leave the server answering normally.
    const abandoned = Array.from({ length: 20 }, () => {
      const controller = new AbortController();
      const pending = api
        .get(`/tiles/v3/East/${inside}.png?apikey=${key}`, { signal: controller.signal })
        .catch(() => undefined);
      setImmediate(() => controller.abort());
      return pending;
    });
    await Promise.all(abandoned);
    const after = await api.get(`/tiles/v3/Vert/${inside}.png?apikey=${key}`);
    assert.equal(after.status, 200);
    assert.ok(!api.logs.some((line) => line.includes('"level":50')), 'no error logged for abandoned tiles');
  });

  test('no key, an unknown key and a revoked key -> 401 API_KEY_INVALID', async () => {
    const path = `/tiles/v3/Vert/${inside}.jpg`;
    assert.equal((await api.get(path)).status, 401);
    const unknown = await api.get(`${path}?apikey=nadir_000000000000_${'A'.repeat(43)}`);
    assert.equal(unknown.status, 401);
    assert.equal((await errorBody(unknown)).code, 'API_KEY_INVALID');
    const other = await createKey(api.services, 'revoked');
    await api.services.accounts.revokeApiKey(other.keyId);
    assert.equal((await api.get(`${path}?apikey=${other.key}`)).status, 401);
  });

  test('the key may come in the Authorization header; such tiles are cached privately only', async () => {
    const r = await api.get(`/tiles/v3/Vert/${inside}.jpg`, { headers: { authorization: `Apikey ${key}` } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('cache-control'), 'private, max-age=600');
  });

  test('beyond the rate limit: 429 RATE_LIMITED with Retry-After, and the headers count down', async () => {
    const limited = await createKey(api.services, 'small-limit');
    await api.services.accounts.setTileRateLimit(limited.account.id, 3, 60);
    const path = `/tiles/v3/Vert/${inside}.jpg?apikey=${limited.key}`;
    const windowEnd = Math.floor(NOW.getTime() / 60_000) * 60 + 60;
    for (const remaining of [2, 1, 0]) {
      const r = await api.get(path);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-ratelimit-limit'), '3');
      assert.equal(r.headers.get('x-ratelimit-remaining'), String(remaining));
      assert.equal(r.headers.get('x-ratelimit-reset'), String(windowEnd));
    }
    const refused = await api.get(path);
    assert.equal(refused.status, 429);
    assert.equal((await errorBody(refused)).code, 'RATE_LIMITED');
    assert.equal(refused.headers.get('retry-after'), String(windowEnd - NOW.getTime() / 1000));
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    // Bad requests count too: the limit guards the server, not only the imagery.
    assert.equal((await api.get(`/tiles/v3/Vert/99/0/0.jpg?apikey=${limited.key}`)).status, 429);
    // Other keys are not affected.
    assert.equal((await api.get(`/tiles/v3/Vert/${inside}.jpg?apikey=${key}`)).status, 200);
  });

  test('GIS documents (TileJSON, WMTS capabilities, STAC) count against the tile rate limit like tiles', async () => {
    const limited = await createKey(api.services, 'gis-limit');
    await api.services.accounts.setTileRateLimit(limited.account.id, 4, 60);
    const documents = [
      '/tiles/v3/Vert/tilejson.json',
      '/wmts/1.0.0/WMTSCapabilities.xml',
      '/stac/v1/search',
      '/stac/v1/collections/surveys',
    ];
    for (const [i, path] of documents.entries()) {
      const r = await api.get(`${path}?apikey=${limited.key}`);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers.get('x-ratelimit-remaining'), String(3 - i), path);
    }
    for (const path of [...documents, `/tiles/v3/Vert/${inside}.jpg`]) {
      const refused = await api.get(`${path}?apikey=${limited.key}`);
      assert.equal(refused.status, 429, path);
      assert.equal((await errorBody(refused)).code, 'RATE_LIMITED', path);
      assert.ok(refused.headers.get('retry-after'), path);
    }
  });

  test('tiles served are counted per account and month, in batches; 304s and errors are not', async () => {
    const counted = await createKey(api.services, 'usage');
    const path = `/tiles/v3/Vert/${inside}.jpg?apikey=${counted.key}`;
    let etag = '';
    for (let i = 0; i < 5; i++) etag = (await api.get(path)).headers.get('etag') ?? '';
    assert.equal((await api.get(path, { headers: { 'if-none-match': etag } })).status, 304);
    assert.equal((await api.get(`/tiles/v3/Vert/3/0/0.jpg?apikey=${counted.key}`)).status, 404);
    assert.equal((await api.services.accounts.monthUsage(counted.account.id, '2026-11')).tiles, 0, 'not yet written');
    await api.services.tileUsage.flush();
    assert.equal((await api.services.accounts.monthUsage(counted.account.id, '2026-11')).tiles, 5);
    assert.equal(
      (await api.services.accounts.monthUsage(accountId, '2026-11')).tiles > 0,
      true,
      'earlier tests counted too',
    );
  });
});
