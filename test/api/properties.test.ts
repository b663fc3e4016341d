/**
 * Property-based tests over every endpoint's parameters (issue 18 item 2), against a real server
 * on generated surveys: coverage, imagery in every type and format with transaction tokens,
 * location and survey tiles of every layer and format, operations, docs and the map page, and
 * paths that lead nowhere. Over real HTTP (where the tile lane answers before fastify) and
 * fastify's inject. Requests mix valid, boundary and hostile values (property-cases.ts says how
 * each is built and what the docs say it must get). The properties:
 *
 * - never a 5xx;
 * - every answer that is not a success (or a 304, or a redirect) is JSON `{"error", "code"}` with a
 *   code of the error table (src/api/http/error-table.ts) and the status the table gives that code;
 * - a success has the content type the format asks for;
 * - the status (and code) docs/api.md gives the case, where its parts say which;
 * - a valid request answered 200 stays 200 with its parameters in another order;
 * - a tile request gets the same answer from the tile lane as from the fastify routes;
 * - a GET is never a 405, no path serves a file from outside the service, and no request leaves
 *   an error in the server log.
 *
 * Seeded (FC_SEED to replay, FC_RUNS_SCALE for more runs): test/support/property-runs.ts.
 */
import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import gdal from 'gdal-async';
import { STATUS_BY_CODE } from '../../src/api/http/error-table.js';
import type { Survey } from '../../src/catalogue/survey.js';
import { TEST_NOW, testClock } from '../support/clock.js';
import { writeManifest } from '../support/fixtures.js';
import { checkProperty, FC_RUNS_SCALE, FC_SEED, scaledRuns } from '../support/property-runs.js';
import { type ApiFixture, startApi } from './helpers.js';
import {
  type ApiCase,
  AS_LISTED,
  coverageCase,
  FIXED_ROUTES,
  imageryCase,
  imageryRenderCase,
  otherCase,
  sentPairs,
  tileCase,
  urlOf,
  type World,
} from './property-cases.js';
import { changeCase, changeTileCase } from './property-change-cases.js';
import { gisCase } from './property-gis-cases.js';
import { heightTileCase } from './property-height-cases.js';

const CENTRE = { lon: 10, lat: 45 };
const FAR = { lon: 10.5, lat: 45.2 };
const SURVEY_A = '3f6c1d2e-8a4b-4c5d-9e6f-7a8b9c0d1e2f';
const SURVEY_B = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';
const SURVEY_C = '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f';
const DAY = 86_400_000;
/** Requests the properties must send per run at FC_RUNS_SCALE=1 (issue 18: at least 10,000). */
const REQUESTS_PER_RUN = 10_000;

const R = 6378137;
const mercatorX = (lon: number) => (R * lon * Math.PI) / 180;
const mercatorY = (lat: number) => R * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));

/** A 256 x 256 GeoTIFF in EPSG:3857 whose top-left corner is `dx`, `dy` metres off the centre. */
async function writeRaster(path: string, kind: 'rgb' | 'dsm', dx: number, dy: number): Promise<void> {
  const n = 256;
  const pixel = 0.6;
  const bands = kind === 'rgb' ? 3 : 1;
  const ds = await gdal.drivers.get('GTiff').createAsync(path, n, n, bands, kind === 'rgb' ? 'Byte' : 'Float32');
  ds.srs = gdal.SpatialReference.fromEPSG(3857);
  const x0 = mercatorX(CENTRE.lon) - (n * pixel) / 2 + dx;
  const y0 = mercatorY(CENTRE.lat) + (n * pixel) / 2 + dy;
  ds.geoTransform = [x0, pixel, 0, y0, 0, -pixel];
  for (let b = 1; b <= bands; b++) {
    const data = kind === 'rgb' ? new Uint8Array(n * n) : new Float32Array(n * n);
    for (let i = 0; i < n * n; i++) data[i] = kind === 'rgb' ? 20 + ((i * (b + 2)) % 200) : 180 + (i % n) / 16;
    await ds.bands.get(b).pixels.writeAsync(0, 0, n, n, data);
  }
  ds.close();
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  via: 'http' | 'inject';
}

/** Characters a request target may hold (RFC 3986): anything else is node's parser's to refuse. */
const TARGET_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
/** node:http's limit on a request head (the target included) is 16 KB; near it, a 431. */
const LONG_HEAD = 15_000;

function headSize(c: ApiCase): number {
  return Object.entries(c.headers).reduce(
    (sum, [name, value]) => sum + name.length + value.length + 4,
    urlOf(c).length,
  );
}

/** A long URL shown by its two ends. */
function elided(url: string): string {
  return url.length > 600 ? `${url.slice(0, 400)}...(${url.length - 550} more)...${url.slice(-150)}` : url;
}

/** What the run did, printed at the end and checked against the budget. */
const tally = {
  requests: 0,
  http: 0,
  inject: 0,
  lane: 0,
  reordered: 0,
  compared: 0,
  statuses: new Map<string, number>(),
};

describe('API properties (fast-check)', () => {
  let api: ApiFixture;
  let world: World;
  let agent: Agent;
  let port: number;
  const clock = testClock();
  const started = performance.now();
  const startedCpu = process.cpuUsage();

  before(async () => {
    // Warnings and errors only: an error line is a property violation (checked last).
    api = await startApi({ now: clock.now, env: { NADIR_LOG_LEVEL: 'warn' } });
    port = Number(new URL(api.baseUrl).port);
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { services, dir } = api;
    await writeRaster(join(dir, 'a.tif'), 'rgb', 0, 0);
    await writeRaster(join(dir, 'a-dsm.tif'), 'dsm', 0, 0);
    await writeRaster(join(dir, 'b.tif'), 'rgb', 60, -30);
    await writeRaster(join(dir, 'b-dsm.tif'), 'dsm', 60, -30);
    const ingested: Survey[] = [];
    for (const [id, captureDate, tags, assets] of [
      [
        SURVEY_A,
        '2024-02-29',
        ['disaster:hurricane'],
        { TrueOrtho: 'a.tif', Vert: 'a.tif', DetailDsm: 'a-dsm.tif', North: 'a.tif', East: 'a.tif' },
      ],
      [
        SURVEY_B,
        '2019-07-09',
        [],
        { Vert: 'b.tif', TrueOrtho: 'b.tif', DetailDsm: 'b-dsm.tif', South: 'b.tif', West: 'b.tif' },
      ],
      // No DetailDsm: the DsmChange cases' survey without heights.
      [SURVEY_C, '2021-05-05', [], { Vert: 'b.tif' }],
    ] as const) {
      const manifest = await writeManifest(dir, id, { id, captureDate, tags, assets });
      ingested.push(await services.ingestor.ingestManifestFile(manifest));
    }

    const { accounts } = services;
    const rates = { monthlyAllowance: 1_000_000, tileRateLimit: 1_000_000_000, tileRateInterval: 60 };
    const main = await accounts.createAccount({ name: 'props', rasterSubscription: true, ...rates });
    const key = (await accounts.issueApiKey(main.id)).key;
    const plain = await accounts.createAccount({ name: 'props-plain', rasterSubscription: false, ...rates });
    const plainKey = (await accounts.issueApiKey(plain.id)).key;
    const revoked = await accounts.issueApiKey(main.id);
    await accounts.revokeApiKey(revoked.id);
    const disabled = await accounts.createAccount({ name: 'props-disabled', rasterSubscription: true, ...rates });
    const disabledKey = (await accounts.issueApiKey(disabled.id)).key;
    await accounts.setDisabled(disabled.id, true);

    const coverage = async (apiKey: string, at: { lon: number; lat: number }, radius: number) => {
      const r = await api.app.inject(
        `/staticmap/v2/coverage.json?apikey=${apiKey}&point=${at.lon},${at.lat}&radius=${radius}&resources=Vert`,
      );
      assert.equal(r.statusCode, 200, r.body);
      return (r.json() as { transactionToken: string }).transactionToken;
    };
    const tokenRadius = 30;
    const farRadius = 20;
    clock.set(new Date(TEST_NOW.getTime() - 31 * DAY));
    const expiredToken = await coverage(key, CENTRE, tokenRadius);
    clock.set(TEST_NOW);
    const doomed = await accounts.issueApiKey(main.id);
    const revokedToken = await coverage(doomed.key, CENTRE, tokenRadius);
    await accounts.revokeApiKey(doomed.id);

    // Tiles of both surveys at every zoom they serve, and one beyond either end.
    const assets = ingested.flatMap((s) => Object.values(s.assets).filter((a) => a !== undefined));
    const minZoom = Math.min(...assets.map((a) => a.minZoom));
    const maxZoom = Math.max(...assets.map((a) => a.maxZoom));
    const box = {
      minX: Math.min(...assets.map((a) => a.bounds.minX)),
      maxX: Math.max(...assets.map((a) => a.bounds.maxX)),
      minY: Math.min(...assets.map((a) => a.bounds.minY)),
      maxY: Math.max(...assets.map((a) => a.bounds.maxY)),
    };
    const tileRanges = [];
    for (let z = Math.max(0, minZoom - 1); z <= Math.min(24, maxZoom + 1); z++) {
      const size = (2 * Math.PI * R) / 2 ** z;
      const column = (x: number) => Math.floor((x + Math.PI * R) / size);
      const row = (y: number) => Math.floor((Math.PI * R - y) / size);
      const last = 2 ** z - 1;
      tileRanges.push({
        z,
        x0: Math.max(0, column(box.minX)),
        x1: Math.min(last, column(box.maxX)),
        y0: Math.max(0, row(box.maxY)),
        y1: Math.min(last, row(box.minY)),
        served: z >= minZoom && z <= maxZoom,
      });
    }
    const top = tileRanges.find((range) => range.z === maxZoom);
    assert.ok(top);
    const centreColumn = Math.floor((mercatorX(CENTRE.lon) + Math.PI * R) / ((2 * Math.PI * R) / 2 ** maxZoom));
    const centreRow = Math.floor((Math.PI * R - mercatorY(CENTRE.lat)) / ((2 * Math.PI * R) / 2 ** maxZoom));
    const tile = await api.app.inject(`/tiles/v3/Vert/${maxZoom}/${centreColumn}/${centreRow}.jpg?apikey=${key}`);
    assert.equal(tile.statusCode, 200, `${tile.body}\n${api.logs.join('')}`);

    world = {
      key,
      plainKey,
      revokedKey: revoked.key,
      disabledKey,
      centre: CENTRE,
      token: await coverage(key, CENTRE, tokenRadius),
      tokenRadius,
      farToken: await coverage(key, FAR, farRadius),
      far: FAR,
      farRadius,
      expiredToken,
      revokedToken,
      surveys: ingested.map((s) => ({
        id: s.id,
        raster: Object.keys(s.assets).filter((t) => ['DetailDsm', 'TrueOrtho', 'Vert'].includes(t)),
        tiles: Object.keys(s.assets).filter((t) => ['Vert', 'North', 'South', 'East', 'West', 'TrueOrtho'].includes(t)),
      })),
      unknownSurvey: '99999999-9999-4999-8999-999999999999',
      tileRanges,
      etag: String(tile.headers.etag),
    };
  });

  after(async () => {
    agent?.destroy();
    await api?.close();
  });

  /** Over HTTP: the path exactly as generated (node:http sends it byte for byte). */
  function overHttp(c: ApiCase, url: string): Promise<Answer> {
    tally.requests++;
    tally.http++;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...c.headers };
      // node:http frames a GET's body only when told its length (else it follows unframed).
      if (c.body !== undefined) headers['content-length'] = String(Buffer.byteLength(c.body));
      const req = httpRequest({ host: '127.0.0.1', port, path: url, method: c.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), via: 'http' }),
        );
        res.on('error', reject);
      });
      req.setTimeout(20_000, () => req.destroy(new Error(`no answer within 20 s: ${c.method} ${url.slice(0, 200)}`)));
      req.on('error', (error) => reject(new Error(`${c.method} ${url.slice(0, 200)}: ${error.message}`)));
      req.end(c.body);
    });
  }

  async function injected(c: ApiCase, url: string): Promise<Answer> {
    tally.requests++;
    tally.inject++;
    const r = await api.app.inject({
      method: c.method as 'GET',
      url,
      headers: c.headers,
      ...(c.body !== undefined ? { payload: c.body } : {}),
    });
    return { status: r.statusCode, headers: r.headers as IncomingHttpHeaders, body: r.rawPayload, via: 'inject' };
  }

  /** Whether inject would send this URL as it is (it reparses URLs with WHATWG's rules). */
  function injectable(url: string): boolean {
    if (url.startsWith('//') || /[^\x21-\x7e]/.test(url)) return false;
    const parsed = new URL(url, 'http://localhost');
    return parsed.pathname + parsed.search === url;
  }

  async function send(c: ApiCase): Promise<Answer> {
    const url = urlOf(c);
    const answer = c.http || !injectable(url) ? await overHttp(c, url) : await injected(c, url);
    if (/\blane;dur=/.test(String(answer.headers['server-timing'] ?? ''))) tally.lane++;
    const key = `${c.endpoint} ${answer.status}`;
    tally.statuses.set(key, (tally.statuses.get(key) ?? 0) + 1);
    return answer;
  }

  function describeCase(c: ApiCase, via?: Answer['via']): string {
    const headers = Object.keys(c.headers).length ? ` headers ${JSON.stringify(c.headers).slice(0, 300)}` : '';
    const body = c.body === undefined ? '' : ` body[${c.body.length}]`;
    return `${c.method} ${elided(urlOf(c))}${via ? ` (${via})` : ''}${headers}${body}`;
  }

  async function property(c: ApiCase): Promise<void> {
    const answer = await send(c);
    checkAnswer(c, answer);
    if (c.endpoint === 'location-tile' || c.endpoint === 'survey-tile') await sameFromFastify(c, answer);
    if (c.valid && answer.status === 200 && c.pairs.length >= 2) await staysOkReordered(c, answer);
  }

  /** The error contract, the documented status, the content type of a success. */
  function checkAnswer(c: ApiCase, a: Answer): void {
    const where = describeCase(c, a.via);
    const url = urlOf(c);
    const type = String(a.headers['content-type'] ?? '');
    const mime = type.split(';')[0]?.trim() ?? '';
    const text = a.body.toString('utf8');
    assert.ok(a.status < 500, `${a.status} for ${where}: ${text.slice(0, 300)}`);
    assert.ok(a.headers['x-request-id'], `no X-Request-Id on the ${a.status} for ${where}`);
    assert.ok(c.method !== 'GET' && c.method !== 'HEAD' ? true : a.status !== 405, `405 for a ${c.method}: ${where}`);
    assert.doesNotMatch(
      text,
      /"devDependencies"\s*:|root:x:0:0|(\n|\\n)\s+at .+\(.*:\d+:\d+\)/,
      `${where} served ${text.slice(0, 200)}`,
    );
    const redirect = [301, 302, 307, 308].includes(a.status);
    if (redirect) assert.match(String(a.headers.location ?? ''), /^\/(?!\/)/, `redirect off the site: ${where}`);
    let code: string | undefined;
    if (a.status >= 400) {
      assert.equal(mime, 'application/json', `${a.status} for ${where} is ${type || 'untyped'}: ${text.slice(0, 200)}`);
      if (c.method !== 'HEAD') {
        let body: { error?: unknown; code?: unknown };
        try {
          body = JSON.parse(text);
        } catch {
          assert.fail(`${a.status} for ${where} is not JSON: ${text.slice(0, 200)}`);
        }
        assert.ok(typeof body.error === 'string' && body.error.length > 0, `no "error" sentence: ${text} for ${where}`);
        assert.ok(
          typeof body.code === 'string' && Object.hasOwn(STATUS_BY_CODE, body.code),
          `code ${body.code}: ${where}`,
        );
        code = body.code;
        const tableStatus = STATUS_BY_CODE[code as keyof typeof STATUS_BY_CODE];
        assert.equal(a.status, tableStatus, `${code} answered ${a.status}, the table says ${tableStatus}: ${where}`);
      }
    } else if (a.status >= 200 && a.status < 300 && a.status !== 204 && c.types.length > 0) {
      assert.ok(c.types.includes(mime), `${a.status} for ${where} is ${type}, not ${c.types.join(' or ')}`);
    }
    // What node's parser refuses before nadir sees it: bytes a client may not send, or too many.
    const refusedByParser =
      a.via === 'http' &&
      ((a.status === 400 && (code ?? 'BAD_REQUEST') === 'BAD_REQUEST' && !TARGET_CHARACTERS.test(url)) ||
        (a.status === 431 && headSize(c) > LONG_HEAD));
    if (c.expect && !refusedByParser) {
      assert.ok(
        c.expect.statuses.includes(a.status),
        `${a.status} ${code ?? ''} for ${where}, the docs say ${c.expect.statuses.join(' or ')} ${c.expect.code ?? ''}: ${text.slice(0, 300)}`,
      );
      if (c.expect.code && code !== undefined) {
        assert.equal(
          code,
          c.expect.code,
          `${a.status} ${code} for ${where}, the docs say ${c.expect.code}: ${text.slice(0, 300)}`,
        );
      }
    }
  }

  /** The tile lane answers as the routes would: fastify alone (inject) gets the same answer. */
  async function sameFromFastify(c: ApiCase, lane: Answer): Promise<void> {
    const url = urlOf(c);
    if (!injectable(url) || url.length > 8000) return;
    tally.compared++;
    const routes = await injected(c, url);
    checkAnswer(c, routes);
    const what = (a: Answer) => ({
      status: a.status,
      type: a.headers['content-type'],
      code: a.status >= 400 && c.method !== 'HEAD' ? JSON.parse(a.body.toString('utf8')).code : undefined,
      etag: a.headers.etag,
    });
    assert.deepEqual(what(lane), what(routes), `the tile lane and the routes differ on ${describeCase(c)}`);
  }

  /** A valid request answered 200 stays 200, with the same content type, in another order. */
  async function staysOkReordered(c: ApiCase, first: Answer): Promise<void> {
    const listed = sentPairs(c);
    let other = sentPairs({ pairs: listed, order: c.order + 1 });
    if (other.every((pair, i) => pair === listed[i])) other = [...listed].reverse();
    const again = await send({ ...c, pairs: other, order: AS_LISTED });
    tally.reordered++;
    const where = describeCase({ ...c, pairs: other, order: AS_LISTED });
    assert.equal(
      again.status,
      200,
      `reordered, ${where} got ${again.status}: ${again.body.toString('utf8').slice(0, 300)}`,
    );
    assert.equal(again.headers['content-type'], first.headers['content-type'], `reordered, ${where} changed its type`);
  }

  test('the routes the properties cover are every route the server has', () => {
    const covered = new Set([
      '/staticmap/v2/coverage.json',
      '/staticmap/v2/surveys/:surveyId/:file',
      '/tiles/v3/:contentType/:z/:x/:file',
      '/tiles/v3/surveys/:surveyId/:contentType/:z/:x/:file',
      '/staticmap/v2/surveys/:surveyId/DsmChange.:format',
      '/tiles/v3/DsmChange/:z/:x/:file',
      // The DetailDsm tiles and their TileJSON (property-height-cases.ts).
      '/tiles/v3/DetailDsm/:style/:z/:x/:file',
      '/tiles/v3/surveys/:surveyId/DetailDsm/:style/:z/:x/:file',
      '/tiles/v3/DetailDsm/:style/tilejson.json',
      '/tiles/v3/surveys/:surveyId/DetailDsm/:style/tilejson.json',
      // The docs' static files (and their redirect to /docs/): the traversal and wandering cases.
      '/docs/*',
      '/docs/static/index.html',
      // The GIS endpoints (property-gis-cases.ts).
      '/stac/v1',
      '/stac/v1/',
      '/stac/v1/conformance',
      '/stac/v1/collections',
      '/stac/v1/collections/:collectionId',
      '/stac/v1/collections/:collectionId/items',
      '/stac/v1/collections/:collectionId/items/:itemId',
      '/stac/v1/search',
      '/tiles/v3/:contentType/tilejson.json',
      '/tiles/v3/surveys/:surveyId/:contentType/tilejson.json',
      '/wmts/1.0.0/WMTSCapabilities.xml',
      '/wmts/1.0.0/:layer/default/:time/GoogleMapsCompatible/:z/:row/:file',
      ...FIXED_ROUTES.map(([path]) => path),
    ]);
    const routes = new Set<string>();
    const tree = api.app.printRoutes({ commonPrefix: false });
    // printRoutes draws a tree: rebuild each route's path from its indentation.
    const stack: string[] = [];
    for (const line of tree.split('\n')) {
      const match = /^([│ ]*)[├└]── (\S+)/.exec(line);
      if (!match) continue;
      const depth = (match[1] as string).length / 4;
      stack.length = depth;
      stack.push(match[2] as string);
      if (/\((GET|HEAD)/.test(line)) routes.add(`/${stack.join('').replace(/^\/+/, '')}`.replace(/\/\/+/g, '/'));
    }
    assert.ok(routes.size >= 20, `found ${routes.size} routes in\n${tree}`);
    const missing = [...routes].filter((route) => !covered.has(route) && !covered.has(route.replace(/\/$/, '')));
    assert.deepEqual(missing, [], `routes no generator sends requests to:\n${tree}`);
  });

  test('the checks refuse what they must (so the properties can fail)', () => {
    const c: ApiCase = {
      endpoint: 'coverage',
      method: 'GET',
      path: '/staticmap/v2/coverage.json',
      pairs: [],
      order: AS_LISTED,
      headers: {},
      http: false,
      valid: true,
      types: ['application/json'],
      expect: { statuses: [200] },
    };
    const json = (status: number, body: unknown, headers: IncomingHttpHeaders = {}): Answer => ({
      status,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r', ...headers },
      body: Buffer.from(JSON.stringify(body)),
      via: 'inject',
    });
    const error = (status: number, code: string) => json(status, { error: 'e', code });
    const refused: [string, ApiCase, Answer][] = [
      ['a 500', { ...c, expect: undefined }, error(500, 'INTERNAL')],
      ['a status the table does not give the code', { ...c, expect: undefined }, error(403, 'BAD_REQUEST')],
      ['a code not in the table', { ...c, expect: undefined }, error(400, 'WHATEVER')],
      ['no code', { ...c, expect: undefined }, json(400, { error: 'e' })],
      [
        'an HTML error',
        { ...c, expect: undefined },
        { ...error(404, 'NOT_FOUND'), headers: { 'content-type': 'text/html', 'x-request-id': 'r' } },
      ],
      [
        'no request id',
        { ...c, expect: undefined },
        { ...error(404, 'NOT_FOUND'), headers: { 'content-type': 'application/json' } },
      ],
      ['a 405 to a GET', { ...c, expect: undefined }, error(405, 'METHOD_NOT_ALLOWED')],
      [
        'a stack trace',
        { ...c, expect: undefined },
        json(400, { error: 'x\n    at f (/src/a.ts:1:2)', code: 'BAD_REQUEST' }),
      ],
      ['another status than the docs say', c, error(400, 'INVALID_PARAMETER')],
      [
        'another code than the docs say',
        { ...c, expect: { statuses: [404], code: 'SURVEY_NOT_FOUND' } },
        error(404, 'NOT_FOUND'),
      ],
      ['a success of another type', { ...c, types: ['image/png'] }, json(200, {})],
    ];
    for (const [what, kase, answer] of refused)
      assert.throws(() => checkAnswer(kase, answer), assert.AssertionError, what);
    checkAnswer(c, json(200, {}));
  });

  test('coverage.json: every parameter, key and method', async () => {
    await checkProperty('coverage', fc.asyncProperty(coverageCase(world), property), 2500);
  });

  test('imagery: every type, format, token and parameter, up to the render', async () => {
    await checkProperty('imagery', fc.asyncProperty(imageryCase(world), property), 2200);
  });

  test('imagery renders: every type and format of both surveys, small sizes', async () => {
    await checkProperty('imagery renders', fc.asyncProperty(imageryRenderCase(world), property), 50);
  });

  test('location and survey tiles: every layer, format, filter and key, lane and routes alike', async () => {
    await checkProperty('tiles', fc.asyncProperty(tileCase(world), property), 2000);
  });

  test('STAC, TileJSON and WMTS: every path, parameter, key and method', async () => {
    await checkProperty('gis', fc.asyncProperty(gisCase(world), property), 800);
  });

  test('DsmChange downloads and tiles: every format, pair of surveys, token and threshold', async () => {
    await checkProperty('DsmChange', fc.asyncProperty(changeCase(world), property), 300);
    await checkProperty('DsmChange tiles', fc.asyncProperty(changeTileCase(world), property), 300);
    await checkProperty('DetailDsm tiles', fc.asyncProperty(heightTileCase(world), property), 300);
  });

  test('operations, docs, the map page and paths that lead nowhere', async () => {
    await checkProperty('other routes', fc.asyncProperty(otherCase(), property), 1000);
  });

  test(`at least ${REQUESTS_PER_RUN} requests per run, part over real HTTP through the tile lane; no error logged`, () => {
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(startedCpu);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const statuses = [...tally.statuses.entries()].sort().map(([k, n]) => `${k}: ${n}`);
    process.stdout.write(
      `# API properties: seed ${FC_SEED}, ${tally.requests} requests (${tally.http} over HTTP, ${tally.lane} answered by the tile lane, ${tally.inject} injected; ${tally.compared} lane/routes comparisons, ${tally.reordered} reorderings) in ${seconds.toFixed(1)} s (${cpuSeconds.toFixed(1)} s of CPU)\n# ${statuses.join(', ')}\n`,
    );
    assert.ok(tally.requests >= scaledRuns(REQUESTS_PER_RUN) || FC_RUNS_SCALE < 1, `${tally.requests} requests`);
    assert.ok(tally.lane >= scaledRuns(300), `the tile lane answered only ${tally.lane}`);
    const errors = api.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    assert.deepEqual(errors, [], 'the server logged errors');
  });
});
