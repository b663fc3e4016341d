/**
 * OpenTelemetry traces (issue 36, item 2), received by an OTLP/HTTP endpoint this test runs: a
 * SERVER span per request whichever entrance answered (the tile lane, fastify's imagery route),
 * continuing the caller's traceparent, with child spans for the tile core's steps, survey-file
 * reads, catalogue queries and the GDAL render; the trace id in every log line of the request;
 * and nothing at all without OTEL_* variables.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LOCATION_TILE_PATH } from '../../src/api/tiles/tile-route.js';
import { parseTracingConfig } from '../../src/config/otel-config.js';
import { ingestJobSpans } from '../../src/tracing/ingest-spans.js';
import { type ApiFixture, createKey, realdataMissing, startApi } from '../api/helpers.js';
import { tileGrid } from '../api/tiles-fixture.js';
import { REALDATA, writeManifest } from '../support/fixtures.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const SURVEY_ID = '6c3d2e1f-0a9b-4c8d-9e7f-6a5b4c3d2e1f';
const POINT = { lon: -89.54165, lat: 44.11885 };
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** OTLP/JSON's attribute list as a plain object. */
function attributesOf(list: { key: string; value: Record<string, unknown> }[] = []): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const { key, value } of list) {
    const [kind, raw] = Object.entries(value)[0] ?? [];
    values[key] = kind === 'intValue' ? Number(raw) : raw;
  }
  return values;
}

/** An OTLP/HTTP traces endpoint: POST /v1/traces in JSON, every span kept. */
async function startCollector(): Promise<{ url: string; spans: ReceivedSpan[]; server: Server }> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type']?.startsWith('application/json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          resourceSpans: { scopeSpans: { spans: (ReceivedSpan & { attributes: never })[] }[] }[];
        };
        for (const resource of body.resourceSpans) {
          for (const scope of resource.scopeSpans) {
            for (const span of scope.spans) spans.push({ ...span, attributes: attributesOf(span.attributes) });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

describe('OpenTelemetry traces', { skip: realdataMissing }, () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let api: ApiFixture;
  let key: string;
  let tilePath: string;

  before(async () => {
    collector = await startCollector();
    api = await startApi({
      now: () => NOW,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
    });
    assert.ok(api.services.tracing, 'OTEL_EXPORTER_OTLP_ENDPOINT turns tracing on');
    key = (await createKey(api.services, 'traced')).key;
    const raster = join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif');
    const manifest = await writeManifest(api.dir, SURVEY_ID, {
      id: SURVEY_ID,
      captureDate: '2021-07-02',
      assets: { Vert: raster, TrueOrtho: raster },
    });
    const survey = await api.services.ingestor.ingestManifestFile(manifest);
    const vert = survey.assets.Vert;
    assert.ok(vert);
    const { column, row } = tileGrid(vert.maxZoom);
    const { minX, minY, maxX, maxY } = vert.bounds;
    tilePath = `/tiles/v3/Vert/${vert.maxZoom}/${column((minX + maxX) / 2)}/${row((minY + maxY) / 2)}.jpg?apikey=${key}`;
  });

  after(async () => {
    await api?.close();
    collector?.server.close();
  });

  test('a span per request, children for its steps, the trace id in its log lines', async () => {
    // A tile through the lane, continuing the caller's trace.
    const tile = await api.get(tilePath, { headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } });
    assert.equal(tile.status, 200);
    assert.match(tile.headers.get('server-timing') ?? '', /\blane;/);
    const tileRequestId = tile.headers.get('x-request-id');
    // A download through fastify's imagery route: a coverage answer's token, then the render.
    const coverage = await api.get(
      `/staticmap/v2/coverage.json?apikey=${key}&point=${POINT.lon},${POINT.lat}&radius=40&resources=TrueOrtho`,
    );
    assert.equal(coverage.status, 200);
    const { transactionToken } = (await coverage.json()) as { transactionToken: string };
    const imagery = await api.get(
      `/staticmap/v2/surveys/${SURVEY_ID}/TrueOrtho.png?transactionToken=${encodeURIComponent(transactionToken)}&point=${POINT.lon},${POINT.lat}&radius=40&size=32x32`,
    );
    assert.equal(imagery.status, 200);
    await imagery.arrayBuffer();
    await api.close(); // sends what is left
    const { spans } = collector;

    const tileSpan = spans.find((s) => s.kind === 2 && s.attributes['http.route'] === LOCATION_TILE_PATH);
    assert.ok(tileSpan, `a SERVER span for the tile: ${spans.map((s) => s.name).join(', ')}`);
    assert.equal(tileSpan.name, `GET ${LOCATION_TILE_PATH}`);
    assert.equal(tileSpan.traceId, CALLER_TRACE);
    assert.equal(tileSpan.parentSpanId, CALLER_SPAN);
    assert.equal(tileSpan.attributes['http.response.status_code'], 200);
    assert.equal(tileSpan.attributes['http.request.method'], 'GET');
    const children = (parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);
    const tileChildren = children(tileSpan).map((s) => s.name);
    for (const name of ['tile.catalogue', 'tile.render', 'storage.read']) assert.ok(tileChildren.includes(name), name);
    const read = children(tileSpan).find((s) => s.name === 'storage.read');
    assert.equal(read?.attributes['nadir.storage.backend'], 'local');
    assert.equal(read?.traceId, CALLER_TRACE);

    const coverageSpan = spans.find(
      (s) => s.kind === 2 && s.attributes['http.route'] === '/staticmap/v2/coverage.json',
    );
    assert.ok(coverageSpan);
    assert.notEqual(coverageSpan.traceId, CALLER_TRACE, 'a request without traceparent starts a trace');
    const search = children(coverageSpan).find((s) => s.name === 'catalogue.search');
    assert.equal(search?.attributes['db.system.name'], 'sqlite');

    const imagerySpan = spans.find(
      (s) => s.kind === 2 && String(s.attributes['http.route']).startsWith('/staticmap/v2/surveys/'),
    );
    assert.ok(imagerySpan, 'a SERVER span for the download (fastify)');
    const render = children(imagerySpan).find((s) => s.name === 'gdal.render_aoi');
    assert.ok(render, `the GDAL render under it: ${children(imagerySpan).map((s) => s.name)}`);
    assert.equal(render.attributes['nadir.raster.format'], 'png');

    const tileLines = api.logs.filter((line) => tileRequestId && line.includes(tileRequestId));
    assert.ok(tileLines.length > 0);
    for (const line of tileLines) assert.equal(JSON.parse(line).traceId, CALLER_TRACE, line);
    const imageryLines = api.logs.filter((line) => line.includes('/staticmap/v2/surveys/'));
    assert.ok(imageryLines.length > 0);
    for (const line of imageryLines) assert.equal(JSON.parse(line).traceId, imagerySpan.traceId, line);
  });
});

describe('tracing configuration', () => {
  test('off unless OTEL_* name an OTLP endpoint; only OTLP over HTTP', () => {
    assert.equal(parseTracingConfig({}), undefined);
    assert.equal(parseTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' }), undefined);
    assert.equal(
      parseTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
      undefined,
    );
    assert.equal(
      parseTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
      undefined,
    );
    const config = parseTracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc,tenant=t1',
      OTEL_SERVICE_NAME: 'imagery',
    });
    assert.deepEqual(config, {
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { 'x-api-key': 'abc', tenant: 't1' },
      serviceName: 'imagery',
      ratio: 1,
      exportDelayMs: 5_000,
    });
    assert.throws(
      () => parseTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
  });

  test('without them, no tracing and no trace ids in log lines', async () => {
    const api = await startApi();
    try {
      assert.equal(api.services.tracing, undefined);
      await api.get('/health');
      assert.ok(api.logs.length > 0 && api.logs.every((line) => !line.includes('traceId')));
    } finally {
      await api.close();
    }
  });

  test('nadir worker: a span per ingest job, begun when taken, ended when done or failed', () => {
    const spans: { name: string; attributes: Record<string, unknown>; status?: unknown; ended: boolean }[] = [];
    const observe = ingestJobSpans({
      begin: (name, attributes) => {
        const span = { name, attributes, status: undefined as unknown, ended: false };
        spans.push(span);
        return {
          setStatus: (status: unknown) => {
            span.status = status;
          },
          end: () => {
            span.ended = true;
          },
        } as never;
      },
    });
    observe({ state: 'started', label: 'a.tif', seconds: 0 });
    observe({ state: 'started', label: 'b.tif', seconds: 0 });
    observe({ state: 'failed', label: 'b.tif', seconds: 2, error: 'unreadable' });
    assert.deepEqual(
      spans.map((s) => [s.name, s.attributes['nadir.ingest.job'], s.ended, s.status !== undefined]),
      [
        ['ingest.job', 'a.tif', false, false],
        ['ingest.job', 'b.tif', true, true],
      ],
    );
    observe({ state: 'done', label: 'a.tif', seconds: 9 });
    assert.equal(spans[0]?.ended, true);
  });
});
