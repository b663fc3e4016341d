/**
 * Prometheus metrics of one server, in process (issue 36, item 1): every answer is counted by
 * route template and status whichever entrance gave it (the tile and coverage lanes before
 * fastify, fastify's routes), tile outcomes and rate-limit refusals are counted, no key or survey
 * id ever becomes a label, `/metrics` is on its own port and not on the API's, and with metrics
 * off nothing is measured. test/deploy/prometheus.test.ts scrapes real servers with Prometheus.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { COVERAGE_PATH } from '../../src/api/coverage/coverage-route.js';
import { LOCATION_TILE_PATH, SURVEY_TILE_PATH } from '../../src/api/tiles/tile-route.js';
import type { Survey } from '../../src/catalogue/survey.js';
import { registryScrape, startMetricsEndpoint } from '../../src/metrics/metrics-endpoint.js';
import type { NadirMetrics } from '../../src/metrics/nadir-metrics.js';
import { type ApiFixture, createKey, realdataMissing, startApi } from '../api/helpers.js';
import { ingestRealdataSurvey, tileGrid } from '../api/tiles-fixture.js';

const NOW = new Date('2026-11-22T12:00:00Z');

/** The value of one series of a counter, 0 when it has not been counted yet. */
async function seriesValue(metrics: NadirMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  assert.ok(metric, `${name} is registered`);
  const { values } = await metric.get();
  const wanted = Object.entries(labels);
  const found = values.find(
    (value) =>
      !(value as { metricName?: string }).metricName?.endsWith('_bucket') &&
      wanted.every(([label, text]) => String(value.labels[label]) === text),
  );
  return found?.value ?? 0;
}

describe('Prometheus metrics of one server', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let metrics: NadirMetrics;
  let key: string;
  let survey: Survey;
  let stored = '';
  let outside = '';

  before(async () => {
    api = await startApi({ now: () => NOW, env: { NADIR_METRICS_PORT: '0', NADIR_METRICS_HOST: '127.0.0.1' } });
    metrics = api.services.metrics as NadirMetrics;
    assert.ok(metrics, 'NADIR_METRICS_PORT turns metrics on');
    key = (await createKey(api.services, 'metrics')).key;
    survey = await ingestRealdataSurvey(api.services, api.dir, 'fieldimager-ws5/odm_orthophoto.tif', {
      id: '3b1f7d2e-9a4c-4e8b-b6d5-0c1a2e3f4d5b',
      captureDate: '2025-06-01',
    });
    const asset = survey.assets.Vert;
    assert.ok(asset);
    const z = asset.maxZoom;
    const { column, row } = tileGrid(z);
    const { minX, minY, maxX, maxY } = asset.bounds;
    outside = `${z}/${column(minX) - 40}/${row(maxY) - 40}`;
    for (let y = row(maxY); y <= row(minY) && !stored; y++) {
      for (let x = column(minX); x <= column(maxX) && !stored; x++) {
        const r = await api.get(`/tiles/v3/Vert/${z}/${x}/${y}.img?apikey=${key}`);
        await r.arrayBuffer();
        if (/passthrough;dur=0/.test(r.headers.get('server-timing') ?? '')) stored = `${z}/${x}/${y}`;
      }
    }
    assert.ok(stored, 'a pass-through tile');
  });
  after(async () => api?.close());

  test('tiles answered by the lane are counted by route template, status and outcome', async () => {
    const route = { route: LOCATION_TILE_PATH, status: '200' };
    const before200 = await seriesValue(metrics, 'nadir_http_requests_total', route);
    const beforePass = await seriesValue(metrics, 'nadir_tile_answers_total', { outcome: 'pass_through' });
    const before304 = await seriesValue(metrics, 'nadir_http_requests_total', { ...route, status: '304' });
    const before404 = await seriesValue(metrics, 'nadir_tile_answers_total', { outcome: 'not_found' });
    const hits = { cache: 'answers', result: 'hit' };
    const beforeHits = await seriesValue(metrics, 'nadir_tile_cache_lookups_total', hits);
    let etag = '';
    for (let i = 0; i < 7; i++) {
      const r = await api.get(`/tiles/v3/Vert/${stored}.img?apikey=${key}`);
      assert.match(r.headers.get('server-timing') ?? '', /\blane;dur=0\b/);
      etag = r.headers.get('etag') ?? '';
      await r.arrayBuffer();
    }
    const notModified = await api.get(`/tiles/v3/Vert/${stored}.img?apikey=${key}`, {
      headers: { 'if-none-match': etag },
    });
    assert.equal(notModified.status, 304);
    assert.equal((await api.get(`/tiles/v3/Vert/${outside}.img?apikey=${key}`)).status, 404);
    const surveyTile = await api.get(`/tiles/v3/surveys/${survey.id}/Vert/${stored}.img?apikey=${key}`);
    assert.equal(surveyTile.status, 200);
    assert.equal(await seriesValue(metrics, 'nadir_http_requests_total', route), before200 + 7);
    assert.equal(await seriesValue(metrics, 'nadir_tile_answers_total', { outcome: 'pass_through' }), beforePass + 8);
    assert.equal(await seriesValue(metrics, 'nadir_http_requests_total', { ...route, status: '304' }), before304 + 1);
    assert.equal(await seriesValue(metrics, 'nadir_tile_answers_total', { outcome: 'not_found' }), before404 + 1);
    // Remembered from its second request (tile-responder.ts): the later ones are the cache's hits.
    assert.ok((await seriesValue(metrics, 'nadir_tile_cache_lookups_total', hits)) >= beforeHits + 5);
    assert.equal(
      await seriesValue(metrics, 'nadir_http_requests_total', { route: SURVEY_TILE_PATH, status: '200' }),
      1,
    );
  });

  test('fastify routes, the coverage lane and unmatched URLs each count under one template', async () => {
    // A percent-encoded parameter name: the lane leaves it to fastify's tile route.
    const viaFastify = await api.get(`/tiles/v3/Vert/${stored}.img?%61pikey=${key}`);
    assert.doesNotMatch(viaFastify.headers.get('server-timing') ?? '', /\blane;/);
    assert.equal(viaFastify.status, 200);
    const coverage = await api.get(`${COVERAGE_PATH}?apikey=${key}&point=-89.54165,44.11885&radius=40&resources=Vert`);
    assert.equal(coverage.status, 200);
    assert.match(coverage.headers.get('server-timing') ?? '', /\blane;dur=0\b/);
    for (const path of [`/no/such/${survey.id}`, `/surveys/${key}/x`]) assert.equal((await api.get(path)).status, 404);
    assert.equal((await api.get('/health')).status, 200);
    assert.equal(await seriesValue(metrics, 'nadir_http_requests_total', { route: COVERAGE_PATH, status: '200' }), 1);
    assert.equal(await seriesValue(metrics, 'nadir_http_requests_total', { route: 'unmatched', status: '404' }), 2);
    assert.equal(await seriesValue(metrics, 'nadir_http_requests_total', { route: '/health', status: '200' }), 1);
    const text = await metrics.registry.metrics();
    assert.ok(!text.includes(survey.id), 'no survey id in any label');
    assert.ok(!text.includes(key) && !text.includes(key.slice(6, 18)), 'no key in any label');
  });

  test('a key over its rate limit: the 429s are counted as refusals and as tile outcomes', async () => {
    const { account } = await createKey(api.services, 'limited');
    await api.services.accounts.setTileRateLimit(account.id, 2, 60);
    const limitedKey = (await api.services.accounts.issueApiKey(account.id)).key;
    const refusals = await seriesValue(metrics, 'nadir_rate_limit_refusals_total', {});
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await api.get(`/tiles/v3/Vert/${stored}.img?apikey=${limitedKey}`)).status);
    assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
    assert.equal(await seriesValue(metrics, 'nadir_rate_limit_refusals_total', {}), refusals + 3);
    assert.equal(
      await seriesValue(metrics, 'nadir_http_requests_total', { route: LOCATION_TILE_PATH, status: '429' }),
      3,
    );
  });

  test('/metrics answers on its own port, in Prometheus text format, and not on the API port', async () => {
    const endpoint = await startMetricsEndpoint(registryScrape(metrics.registry), '127.0.0.1', 0);
    try {
      const scrape = await fetch(`http://127.0.0.1:${endpoint.port}/metrics`);
      assert.equal(scrape.status, 200);
      assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = await scrape.text();
      for (const family of [
        'nadir_http_request_duration_seconds_bucket',
        'nadir_tile_answers_total',
        'nadir_raster_admission_queued',
        'nadir_process_resident_memory_bytes',
        'nadir_nodejs_eventloop_lag_p99_seconds',
        'nadir_nodejs_gc_duration_seconds',
        'nadir_database_up 1',
      ]) {
        assert.ok(text.includes(family), family);
      }
      assert.equal((await fetch(`http://127.0.0.1:${endpoint.port}/other`)).status, 404);
    } finally {
      await endpoint.close();
    }
    assert.equal((await api.get('/metrics')).status, 404, 'the API port has no /metrics');
  });
});

describe('metrics off (no NADIR_METRICS_PORT)', () => {
  test('nothing is measured: no registry, no /metrics, no recorder in the parts', async () => {
    const api = await startApi();
    try {
      assert.equal(api.services.metrics, undefined);
      assert.equal((await api.get('/metrics')).status, 404);
    } finally {
      await api.close();
    }
  });
});
