import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NadirClient } from '../src/client.js';
import { NadirUsageError, TransactionTokenError } from '../src/errors.js';
import { MemoryTokenStore, TOKEN_LIFETIME_MS } from '../src/token-store.js';
import { apiError, coveragePage, fakeFetch, fakeTime, json, type SurveyStub } from './fake-fetch.js';

const AOI = { point: { lon: -85.4181766, lat: 29.94582896 }, radius: 50 };
const SURVEYS: SurveyStub[] = Array.from({ length: 5 }, (_, i) => ({
  id: `survey-${i}`,
  captureDate: `2025-0${9 - i}-01`,
  pixelSizes: { TrueOrtho: 0.15, DetailDsm: 0.3 },
}));

function client(fetch: typeof globalThis.fetch, extra: Partial<ConstructorParameters<typeof NadirClient>[0]> = {}) {
  const time = fakeTime();
  return {
    time,
    client: new NadirClient({
      baseUrl: 'http://nadir.test/',
      apiKey: 'key-1',
      fetch,
      clock: time.clock,
      sleep: time.sleep,
      ...extra,
    }),
  };
}

const isCoverage = (url: URL) => url.pathname === '/staticmap/v2/coverage.json';

describe('NadirClient', () => {
  test('surveys() walks every page by offset and yields each survey once, newest first', async () => {
    const server = fakeFetch((url) => coveragePage(url, SURVEYS));
    const { client: nadir } = client(server.fetch);
    const ids: string[] = [];
    for await (const survey of nadir.surveys({ aoi: AOI, resources: ['TrueOrtho'], limit: 2 })) ids.push(survey.id);
    assert.deepEqual(
      ids,
      SURVEYS.map((s) => s.id),
    );
    assert.deepEqual(
      server.calls.map((c) => c.url.searchParams.get('offset')),
      ['0', '2', '4'],
    );
    const first = server.calls[0]?.url.searchParams;
    assert.equal(first?.get('apikey'), 'key-1');
    assert.equal(first?.get('point'), '-85.4181766,29.94582896');
    assert.equal(first?.get('resources'), 'TrueOrtho');
  });

  test('the token of the first coverage call is reused for imagery until it expires; then a new one is fetched', async () => {
    let issued = 0;
    const server = fakeFetch((url) => {
      if (isCoverage(url)) return coveragePage(url, SURVEYS, `token-${++issued}`);
      return new Response(new Uint8Array([1, 2, 3]), { headers: { 'content-type': 'image/tiff' } });
    });
    const store = new MemoryTokenStore();
    const { client: nadir, time } = client(server.fetch, { tokenStore: store });
    await nadir.coverage({ aoi: AOI, resources: ['TrueOrtho'] });
    // A second coverage call gives another token; the first is kept (switching would bill again).
    await nadir.coverage({ aoi: AOI, resources: ['DetailDsm'] });
    for (const type of ['TrueOrtho', 'DetailDsm'] as const) {
      const response = await nadir.imagery({ surveyId: 'survey-0', type, format: 'tif', aoi: AOI, size: 667 });
      assert.deepEqual([...new Uint8Array(await response.arrayBuffer())], [1, 2, 3]);
    }
    const imagery = server.calls.filter((c) => !isCoverage(c.url));
    assert.deepEqual(
      imagery.map((c) => c.url.searchParams.get('transactionToken')),
      ['token-1', 'token-1'],
    );
    assert.equal(imagery[0]?.url.pathname, '/staticmap/v2/surveys/survey-0/TrueOrtho.tif');
    assert.equal(imagery[0]?.url.searchParams.get('size'), '667x667');
    assert.equal(imagery[0]?.url.searchParams.get('apikey'), null, 'imagery carries the token, not the key');
    // A smaller radius at the same point is served by the same token; 30 days later it is not.
    await nadir.imagery({ surveyId: 'survey-0', type: 'Vert', format: 'jpg', aoi: { ...AOI, radius: 20 }, size: 10 });
    assert.equal(server.calls.filter(isCoverageCall).length, 2);
    time.advance(TOKEN_LIFETIME_MS);
    await nadir.imagery({ surveyId: 'survey-0', type: 'Vert', format: 'jpg', aoi: AOI, size: 10 });
    assert.equal(server.calls.filter(isCoverageCall).length, 3);
    assert.equal(server.calls.at(-1)?.url.searchParams.get('transactionToken'), 'token-3');
  });

  test('a token the server refuses as expired is replaced once; an AOI mismatch is thrown as is', async () => {
    let issued = 0;
    let refuse = 1;
    const server = fakeFetch((url) => {
      if (isCoverage(url)) return coveragePage(url, [], `token-${++issued}`);
      if (refuse-- > 0) return apiError(403, 'TRANSACTION_TOKEN_INVALID', { reason: 'expired' });
      return new Response('tif');
    });
    const { client: nadir } = client(server.fetch);
    const response = await nadir.imagery({ surveyId: 's', type: 'TrueOrtho', format: 'tif', aoi: AOI, size: 5 });
    assert.equal(await response.text(), 'tif');
    assert.equal(server.calls.at(-1)?.url.searchParams.get('transactionToken'), 'token-2');

    const mismatch = fakeFetch((url) =>
      isCoverage(url) ? coveragePage(url, []) : apiError(403, 'TRANSACTION_TOKEN_INVALID', { reason: 'aoi_mismatch' }),
    );
    const other = client(mismatch.fetch).client;
    await assert.rejects(
      other.imagery({ surveyId: 's', type: 'TrueOrtho', format: 'tif', aoi: AOI, size: 5 }),
      (error) => {
        assert.ok(error instanceof TransactionTokenError);
        assert.equal(error.reason, 'aoi_mismatch');
        assert.equal(error.code, 'TRANSACTION_TOKEN_INVALID');
        return true;
      },
    );
  });

  test('tiles: filters in the query, NO_IMAGERY as undefined, and a used-up window waited for before asking', async () => {
    const reset = Math.floor(fakeTime().clock() / 1000) + 30;
    const server = fakeFetch((url, call) => {
      if (url.pathname.endsWith('/1/1.png')) return apiError(404, 'NO_IMAGERY');
      return new Response(new Uint8Array([9]), {
        headers: {
          'content-type': 'image/png',
          'x-survey-ids': 'a,b',
          'x-ratelimit-limit': '2',
          'x-ratelimit-remaining': call === 1 ? '0' : '1',
          'x-ratelimit-reset': String(reset),
        },
      });
    });
    const { client: nadir, time } = client(server.fetch);
    const first = await nadir.tile({
      type: 'East',
      tile: { z: 18, x: 3, y: 4 },
      format: 'png',
      since: '2024-01-01',
      until: '12M',
      include: ['disaster'],
      exclude: ['disaster:fire'],
    });
    assert.deepEqual(first?.surveyIds, ['a', 'b']);
    const query = server.calls[0]?.url.searchParams;
    assert.equal(server.calls[0]?.url.pathname, '/tiles/v3/East/18/3/4.png');
    assert.deepEqual(
      ['since', 'until', 'include', 'exclude'].map((name) => query?.get(name)),
      ['2024-01-01', '12M', 'disaster', 'disaster:fire'],
    );
    assert.equal(await nadir.tile({ type: 'Vert', tile: { z: 1, x: 1, y: 1 }, format: 'png' }), undefined);
    assert.deepEqual(time.waits, [30_000], 'waited for the window to reset instead of collecting a 429');
  });

  test('tile URLs for map libraries, and survey tiles', () => {
    const { client: nadir } = client(fakeFetch(() => new Response()).fetch);
    assert.equal(
      nadir.tileUrl({ type: 'Vert', tile: { z: 2, x: 1, y: 3 }, format: 'jpg', surveyId: 'abc' }),
      'http://nadir.test/tiles/v3/surveys/abc/Vert/2/1/3.jpg?apikey=key-1',
    );
    assert.equal(
      nadir.tileUrlTemplate({ type: 'North', format: 'png', since: '2Y' }),
      'http://nadir.test/tiles/v3/North/{z}/{x}/{y}.png?since=2Y&apikey=key-1',
    );
    assert.equal(
      nadir.dsmChangeTileUrlTemplate({ after: 'new', baseline: 'old' }),
      'http://nadir.test/tiles/v3/DsmChange/{z}/{x}/{y}.png?after=new&baseline=old&apikey=key-1',
    );
    assert.equal(
      nadir.dsmChangeTileUrlTemplate({ after: 'new', baseline: 'old', threshold: 1.5 }),
      'http://nadir.test/tiles/v3/DsmChange/{z}/{x}/{y}.png?after=new&baseline=old&threshold=1.5&apikey=key-1',
    );
    assert.throws(() => nadir.dsmChangeTileUrlTemplate({ after: 'a b', baseline: 'old' }), NadirUsageError);
    assert.throws(() => nadir.dsmChangeTileUrlTemplate({ after: 'new', baseline: 'old', threshold: -1 }), /threshold/);
  });

  test('the key can travel in the Authorization header instead of the URL', async () => {
    const server = fakeFetch((url) => coveragePage(url, []));
    const { client: nadir } = client(server.fetch, { sendKeyIn: 'header' });
    await nadir.coverage({ aoi: AOI, resources: ['Vert'] });
    assert.equal(server.calls[0]?.url.searchParams.get('apikey'), null);
    assert.equal(server.calls[0]?.headers.authorization, 'Apikey key-1');
  });

  test('every parameter is checked before anything is sent, naming it', async () => {
    const server = fakeFetch(() => json(200, {}));
    const { client: nadir } = client(server.fetch);
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => nadir.coverage({ aoi: { ...AOI, radius: 101 }, resources: ['Vert'] }), /radius/],
      [() => nadir.coverage({ aoi: { point: { lon: 0, lat: 89 }, radius: 5 }, resources: ['Vert'] }), /latitude/],
      [() => nadir.coverage({ aoi: AOI, resources: [] }), /resources/],
      [() => nadir.coverage({ aoi: AOI, resources: ['North' as 'Vert'] }), /resources must be one of/],
      [() => nadir.coverage({ aoi: AOI, resources: ['Vert'], since: 'yesterday' }), /since/],
      [() => nadir.coverage({ aoi: AOI, resources: ['Vert'], limit: 0 }), /limit/],
      [() => nadir.imagery({ surveyId: 's', type: 'TrueOrtho', format: 'tif', aoi: AOI, size: 5001 }), /size/],
      [() => nadir.imagery({ surveyId: '../x', type: 'TrueOrtho', format: 'tif', aoi: AOI, size: 5 }), /surveyId/],
      [() => nadir.imagery({ surveyId: 's', type: 'TrueOrtho', format: 'gif' as 'tif', aoi: AOI, size: 5 }), /format/],
      [() => nadir.tile({ type: 'Vert', tile: { z: 2, x: 4, y: 0 }, format: 'png' }), /x must be 0..3/],
      [() => nadir.tile({ type: 'Vert', tile: { z: 2, x: 0, y: 0 }, format: 'png', include: ['a b'] }), /include/],
    ];
    for (const [call, message] of cases)
      await assert.rejects(call(), (e) => e instanceof NadirUsageError && message.test(e.message));
    assert.equal(server.calls.length, 0);
    assert.throws(() => new NadirClient({ baseUrl: 'ftp://x', apiKey: 'k' }), NadirUsageError);
    assert.throws(() => new NadirClient({ baseUrl: 'http://x', apiKey: '' }), NadirUsageError);
  });
});

function isCoverageCall(call: { url: URL }): boolean {
  return isCoverage(call.url);
}

describe('token scopes', () => {
  test('keyed by server, key fingerprint and point, never the key; the same without SubtleCrypto', async () => {
    const { tokenScope } = await import('../src/token-store.js');
    const secure = await tokenScope('http://a', 'nadir_secret_key', AOI);
    assert.match(secure, /^http:\/\/a key:[0-9a-f]{16} point:-85.4181766,29.94582896$/);
    assert.ok(!secure.includes('secret'));
    assert.notEqual(secure, await tokenScope('http://a', 'nadir_other_key', AOI));
    // As in a browser page on plain http, where crypto.subtle is missing.
    const original = Object.getOwnPropertyDescriptor(globalThis, 'crypto') as PropertyDescriptor;
    Object.defineProperty(globalThis, 'crypto', { value: {}, configurable: true });
    try {
      const plain = await tokenScope('http://a', 'nadir_secret_key', AOI);
      assert.match(plain, /key:[0-9a-f]{16} /);
      assert.equal(plain, await tokenScope('http://a', 'nadir_secret_key', AOI));
      assert.notEqual(plain, await tokenScope('http://a', 'nadir_other_key', AOI));
    } finally {
      Object.defineProperty(globalThis, 'crypto', original);
    }
  });
});
