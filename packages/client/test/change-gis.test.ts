import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NadirClient } from '../src/client.js';
import { NadirApiError, NadirUsageError } from '../src/errors.js';
import { planDownload } from '../src/plan.js';
import type { Survey } from '../src/types.js';
import { apiError, coveragePage, fakeFetch, fakeTime, json, type SurveyStub } from './fake-fetch.js';

const AOI = { point: { lon: -85.41831106198826, lat: 29.94528969653108 }, radius: 12 };
const FIGURES = {
  after: { id: 'after-1', captureDate: '2025-10-20' },
  baseline: { id: 'before-1', captureDate: '2025-04-02' },
  point: [AOI.point.lon, AOI.point.lat],
  radius: 12,
  size: 80,
  groundResolution: 0.3,
  threshold: 2,
  aoiArea: 576,
  comparedArea: 576,
  comparedShare: 1,
  loss: { area: 104.67, volume: 648.22 },
  gain: { area: 11.16, volume: 32.49 },
};

function client(fetch: typeof globalThis.fetch) {
  const time = fakeTime();
  return new NadirClient({
    baseUrl: 'http://nadir.test',
    apiKey: 'key-1',
    fetch,
    clock: time.clock,
    sleep: time.sleep,
  });
}

const isCoverage = (url: URL) => url.pathname === '/staticmap/v2/coverage.json';
const STUBS: SurveyStub[] = [
  { id: 'after-1', captureDate: '2025-10-20', pixelSizes: { DetailDsm: 0.3, TrueOrtho: 0.075 } },
  { id: 'mid-1', captureDate: '2025-04-02', pixelSizes: { TrueOrtho: 0.075 } },
  { id: 'before-1', captureDate: '2024-03-14', pixelSizes: { DetailDsm: 0.25 } },
];

describe('DsmChange', () => {
  test('dsmChangeFigures: the figures through the AOI token, with baseline and threshold, the key never in the URL', async () => {
    const server = fakeFetch((url) => (isCoverage(url) ? coveragePage(url, STUBS, 'token-9') : json(200, FIGURES)));
    const nadir = client(server.fetch);
    const figures = await nadir.dsmChangeFigures({
      after: 'after-1',
      baseline: 'before-1',
      aoi: AOI,
      size: 80,
      threshold: 1.5,
    });
    assert.deepEqual(figures, FIGURES);
    const call = server.calls.at(-1)?.url as URL;
    assert.equal(call.pathname, '/staticmap/v2/surveys/after-1/DsmChange.json');
    assert.equal(call.searchParams.get('transactionToken'), 'token-9');
    assert.equal(call.searchParams.get('baseline'), 'before-1');
    assert.equal(call.searchParams.get('threshold'), '1.5');
    assert.equal(call.searchParams.get('size'), '80x80');
    assert.equal(call.searchParams.has('apikey'), false);
  });

  test('a refused baseline is the typed error with its code; wrong arguments send nothing', async () => {
    const server = fakeFetch((url) =>
      isCoverage(url) ? coveragePage(url, STUBS) : apiError(400, 'BASELINE_NOT_EARLIER', { parameter: 'baseline' }),
    );
    const nadir = client(server.fetch);
    const error = await nadir
      .dsmChangeFigures({ after: 'before-1', baseline: 'after-1', aoi: AOI, size: 80 })
      .catch((e) => e);
    assert.ok(error instanceof NadirApiError);
    assert.equal(error.code, 'BASELINE_NOT_EARLIER');
    assert.equal(error.parameter, 'baseline');
    const sent = server.calls.length;
    for (const wrong of [
      () => nadir.dsmChangeFigures({ after: 'a', baseline: 'a', aoi: AOI, size: 80 }),
      () => nadir.dsmChangeFigures({ after: 'a', aoi: AOI, size: 80, threshold: 101 }),
      () => nadir.imagery({ surveyId: 'a', type: 'DetailDsm', format: 'tif', aoi: AOI, size: 80, baseline: 'b' }),
      () => nadir.imagery({ surveyId: 'a', type: 'TrueOrtho', format: 'json' as 'tif', aoi: AOI, size: 80 }),
    ])
      await assert.rejects(wrong, NadirUsageError);
    assert.equal(server.calls.length, sent);
  });

  test('planDownload: DsmChange sized on the DetailDsm GSD, baseline the next older survey with DetailDsm, named for both', () => {
    const surveys = STUBS as unknown as Survey[];
    const plan = planDownload(surveys, ['DsmChange'], 'tif', AOI);
    assert.deepEqual(
      plan.images.map((i) => [i.fileName, i.size, i.baseline?.id]),
      [
        [
          '2025-10-20_after-1_DsmChange_2024-03-14_before-1_-85.41831106198826,29.94528969653108_12m_80px.tif',
          80,
          'before-1',
        ],
      ],
    );
    assert.deepEqual(
      plan.missing.map((m) => m.surveyId),
      ['mid-1', 'before-1'],
      'no DetailDsm, and no older survey to compare with',
    );
    const chosen = planDownload(surveys, ['DsmChange', 'DetailDsm'], 'png', AOI, { baseline: 'before-1' });
    assert.deepEqual(
      chosen.images.map((i) => i.fileName),
      [
        '2025-10-20_after-1_DsmChange_2024-03-14_before-1_-85.41831106198826,29.94528969653108_12m_80px.png',
        '2025-10-20_after-1_DetailDsm_-85.41831106198826,29.94528969653108_12m_80px.png',
        '2024-03-14_before-1_DetailDsm_-85.41831106198826,29.94528969653108_12m_96px.png',
      ],
    );
  });

  test('change tiles: URL template and fetch share the rules; no two surveys is undefined', async () => {
    const server = fakeFetch(() => apiError(404, 'NO_IMAGERY'));
    const nadir = client(server.fetch);
    assert.equal(
      nadir.dsmChangeTileUrlTemplate({ after: 'after-1', baseline: 'before-1', threshold: 1 }),
      'http://nadir.test/tiles/v3/DsmChange/{z}/{x}/{y}.png?after=after-1&baseline=before-1&threshold=1&apikey=key-1',
    );
    assert.equal(await nadir.dsmChangeTile({ tile: { z: 19, x: 1, y: 2 }, since: '2Y' }), undefined);
    assert.equal(server.calls[0]?.url.pathname, '/tiles/v3/DsmChange/19/1/2.png');
    assert.equal(server.calls[0]?.url.searchParams.get('since'), '2Y');
    assert.throws(() => nadir.dsmChangeTileUrlTemplate({ baseline: 'b' }), NadirUsageError);
    assert.throws(() => nadir.dsmChangeTileUrlTemplate({ after: 'a', since: '2Y' }), NadirUsageError);
  });
});

describe('TileJSON and WMTS', () => {
  test('tileJson of a filtered layer and of one survey; filters on one survey are refused', async () => {
    const server = fakeFetch((url) => json(200, { tilejson: '3.0.0', tiles: [`${url.origin}/x/{z}/{x}/{y}.img`] }));
    const nadir = client(server.fetch);
    const layer = await nadir.tileJson({ type: 'Vert', since: '2024-01-01', include: ['disaster'] });
    assert.equal(layer.tilejson, '3.0.0');
    assert.equal(server.calls[0]?.url.pathname, '/tiles/v3/Vert/tilejson.json');
    assert.equal(server.calls[0]?.url.searchParams.get('include'), 'disaster');
    await nadir.tileJson({ type: 'North', surveyId: 's-1' });
    assert.equal(server.calls[1]?.url.pathname, '/tiles/v3/surveys/s-1/North/tilejson.json');
    await assert.rejects(nadir.tileJson({ type: 'Vert', surveyId: 's-1', since: '2Y' }), NadirUsageError);
    assert.equal(server.calls.length, 2);
  });

  test('WMTS: the capabilities URL carries the filters and the key; the XML comes back as text; a tile by TileRow/TileCol', async () => {
    const server = fakeFetch((url) =>
      url.pathname.endsWith('.xml')
        ? new Response('<Capabilities/>', { headers: { 'content-type': 'application/xml' } })
        : new Response(new Uint8Array([137, 80]), { headers: { 'content-type': 'image/png', 'x-survey-ids': 's1' } }),
    );
    const nadir = client(server.fetch);
    assert.equal(
      nadir.wmtsCapabilitiesUrl({ until: '2025-05-01' }),
      'http://nadir.test/wmts/1.0.0/WMTSCapabilities.xml?until=2025-05-01&apikey=key-1',
    );
    assert.equal(await nadir.wmtsCapabilities({ include: ['disaster'] }), '<Capabilities/>');
    const tile = await nadir.wmtsTile({
      layer: 'Vert:disaster',
      time: '2025-10-20',
      tile: { z: 18, x: 3, y: 5 },
      format: 'png',
    });
    assert.deepEqual(tile?.surveyIds, ['s1']);
    assert.equal(
      server.calls[1]?.url.pathname,
      '/wmts/1.0.0/Vert:disaster/default/2025-10-20/GoogleMapsCompatible/18/5/3.png',
    );
    assert.throws(() => nadir.wmtsCapabilitiesUrl({ since: 'last week' }), NadirUsageError);
  });
});
