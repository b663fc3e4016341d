/**
 * The tile fast lane (src/api/tiles/tile-lane.ts) answers the common tile requests before fastify
 * does. Two promises are checked here over real HTTP: it answers exactly as the fastify routes
 * would (same status, bytes and headers), and what it declines reaches fastify without having
 * counted against the key's rate limit.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TileLane } from '../../src/api/tiles/tile-lane.js';
import { tileRouter } from '../../src/api/tiles/tile-route.js';
import type { Survey } from '../../src/catalogue/survey.js';
import { REALDATA, writeManifest } from '../support/fixtures.js';
import { type ApiFixture, createKey, realdataMissing, startApi } from './helpers.js';
import { ingestRealdataSurvey, tileGrid } from './tiles-fixture.js';

const NOW = new Date('2026-11-22T12:00:00Z');
/** Headers that differ between any two answers, whoever gives them. */
const VARYING = new Set(['x-request-id', 'server-timing', 'date', 'x-ratelimit-remaining']);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

async function answerOf(response: Response): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!VARYING.has(name)) headers[name] = value;
  return { status: response.status, headers, body: Buffer.from(await response.arrayBuffer()) };
}

/** The same request, made for fastify: a percent-encoded parameter name is one the lane leaves alone. */
function forFastify(path: string): string {
  if (path.includes('apikey=')) return path.replace('apikey=', '%61pikey=');
  return `${path}${path.includes('?') ? '&' : '?'}cache%20buster=1`;
}

describe('tile fast lane', { skip: realdataMissing }, () => {
  let api: ApiFixture;
  let key: string;
  let survey: Survey;
  let inside: string;
  let edge = '';
  let stored = '';
  let outside: string;

  before(async () => {
    api = await startApi({ now: () => NOW });
    key = (await createKey(api.services, 'lane')).key;
    // The same raster as the vertical and a panorama layer: panorama tiles are the rotated ground.
    const raster = join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif');
    const id = '7c2f0e4a-5b1d-4c3e-8a90-1f2e3d4c5b6a';
    const manifest = await writeManifest(api.dir, id, {
      id,
      captureDate: '2025-06-01',
      firstPhotoTime: '2025-06-01T15:00:00Z',
      lastPhotoTime: '2025-06-01T16:00:00Z',
      tags: ['weather:clear'],
      assets: { Vert: raster, North: raster },
    });
    survey = await api.services.ingestor.ingestManifestFile(manifest);
    const asset = survey.assets.Vert;
    assert.ok(asset);
    const z = asset.maxZoom;
    const { column, row } = tileGrid(z);
    const { minX, minY, maxX, maxY } = asset.bounds;
    const middleRow = row((minY + maxY) / 2);
    inside = `${z}/${column((minX + maxX) / 2)}/${middleRow}`;
    outside = `${z}/${column(minX) - 40}/${row(maxY) - 40}`;
    // Over every tile of the raster: one it covers only in part (its img is a PNG), and one sent as
    // stored (its COG tile whole and fully valid).
    for (let y = row(maxY); y <= row(minY); y++) {
      for (let x = column(minX); x <= column(maxX); x++) {
        const r = await api.get(`/tiles/v3/Vert/${z}/${x}/${y}.img?apikey=${key}`);
        await r.arrayBuffer();
        if (r.headers.get('content-type') === 'image/png') edge ||= `${z}/${x}/${y}`;
        if (/passthrough;dur=0/.test(r.headers.get('server-timing') ?? '')) stored ||= `${z}/${x}/${y}`;
      }
    }
    assert.ok(edge, 'a partial tile');
    assert.ok(stored, 'a pass-through tile');
  });
  after(async () => api.close());

  test('answers exactly as the fastify routes do', async () => {
    const first = await api.get(`/tiles/v3/Vert/${inside}.jpg?apikey=${key}`);
    const etag = first.headers.get('etag') ?? '';
    assert.equal(first.status, 200);
    const cases: [string, RequestInit?][] = [
      [`/tiles/v3/Vert/${inside}.jpg?apikey=${key}`],
      [`/tiles/v3/Vert/${inside}.png?apikey=${key}`],
      [`/tiles/v3/Vert/${inside}.img?apikey=${key}`],
      [`/tiles/v3/Vert/${edge}.img?apikey=${key}`],
      [`/tiles/v3/North/${inside}.png?apikey=${key}`],
      [`/tiles/v3/North/${edge}.jpg?apikey=${key}`],
      [`/tiles/v3/North/${inside}.img?apikey=${key}`],
      [`/tiles/v3/surveys/${survey.id}/Vert/${inside}.jpg?apikey=${key}`],
      [`/tiles/v3/surveys/${survey.id}/North/${edge}.png?apikey=${key}&since=2025-01-01`],
      [`/tiles/v3/Vert/${inside}.jpg?apikey=${key}&since=2025-05-01&until=2025-07-01&include=weather&mosaic=earliest`],
      [`/tiles/v3/Vert/${inside}.jpg?apikey=${key}&exclude=weather:storm&unrelated=1&unrelated=2`],
      [`/tiles/v3/Vert/${inside}.jpg?apikey=${key}`, { method: 'HEAD' }],
      [`/tiles/v3/Vert/${inside}.jpg?apikey=${key}`, { headers: { 'if-none-match': etag } }],
      [`/tiles/v3/Vert/${inside}.jpg?apikey=${key}`, { headers: { 'if-none-match': `W/"other", ${etag}` } }],
      [`/tiles/v3/Vert/${inside}.jpg`, { headers: { authorization: `Apikey ${key}` } }],
      // Admitted, then nothing to draw: the lane answers the 404s too.
      [`/tiles/v3/Vert/${inside}.jpg?apikey=${key}&since=2026-06-01`],
      [`/tiles/v3/Vert/${outside}.jpg?apikey=${key}`],
      [`/tiles/v3/surveys/00000000-0000-4000-8000-000000000000/Vert/${inside}.jpg?apikey=${key}`],
      [`/tiles/v3/surveys/${survey.id}/Vert/${outside}.jpg?apikey=${key}`],
    ];
    for (const [path, init] of cases) {
      const laneResponse = await api.get(path, init);
      const fastifyResponse = await api.get(forFastify(path), init);
      assert.match(laneResponse.headers.get('server-timing') ?? '', /\blane;dur=0\b/, `${path}: the lane answered`);
      assert.doesNotMatch(fastifyResponse.headers.get('server-timing') ?? '', /\blane;/, `${path}: fastify answered`);
      const lane = await answerOf(laneResponse);
      const fastify = await answerOf(fastifyResponse);
      assert.ok([200, 304, 404].includes(lane.status), `${path}: ${lane.status}`);
      assert.deepEqual(lane.headers, fastify.headers, path);
      assert.equal(lane.status, fastify.status, path);
      assert.ok(lane.body.equals(fastify.body), `${path}: the same bytes`);
    }
  });

  test('over the rate limit, the lane and fastify give the same 429', async () => {
    const limited = await createKey(api.services, 'lane-limited');
    await api.services.accounts.setTileRateLimit(limited.account.id, 1, 60);
    const path = `/tiles/v3/Vert/${inside}.jpg?apikey=${limited.key}`;
    assert.equal((await api.get(path)).status, 200);
    const lane = await answerOf(await api.get(path));
    const fastify = await answerOf(await api.get(forFastify(path)));
    assert.equal(lane.status, 429);
    assert.deepEqual(lane.headers, fastify.headers);
    assert.deepEqual(JSON.parse(lane.body.toString()), JSON.parse(fastify.body.toString()));
  });

  test('a repeated pass-through tile is remembered, yet every request is counted and its key checked', async () => {
    const own = await createKey(api.services, 'lane-repeats');
    await api.services.accounts.setTileRateLimit(own.account.id, 4, 60);
    const path = `/tiles/v3/Vert/${stored}.jpg?apikey=${own.key}`;
    const first = await api.get(path);
    assert.match(first.headers.get('server-timing') ?? '', /passthrough;dur=0/, 'the fixture tile is sent as stored');
    const body = Buffer.from(await first.arrayBuffer());
    const repeat = await api.get(path);
    assert.ok(Buffer.from(await repeat.arrayBuffer()).equals(body));
    assert.equal(repeat.headers.get('etag'), first.headers.get('etag'));
    assert.equal(repeat.headers.get('x-ratelimit-remaining'), '2');
    const revalidated = await api.get(path, { headers: { 'if-none-match': first.headers.get('etag') ?? '' } });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.headers.get('x-ratelimit-remaining'), '1');
    await api.services.accounts.revokeApiKey(own.keyId);
    assert.equal((await api.get(path)).status, 401, 'a revoked key is refused at once');
  });

  test('a remembered tile follows the catalogue: a newer survey over it is drawn at once', async () => {
    const path = `/tiles/v3/Vert/${stored}.jpg?apikey=${key}`;
    const before = await api.get(path);
    const beforeBody = Buffer.from(await before.arrayBuffer());
    assert.equal(before.headers.get('x-survey-ids'), survey.id);
    // A rotated copy of the same raster is new imagery over the same ground.
    const id = '9d8e7f60-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
    await ingestRealdataSurvey(api.services, api.dir, 'fieldimager-ws5/odm_orthophoto.tif', {
      id,
      captureDate: '2026-03-01',
    });
    const after = await api.get(path);
    assert.equal(after.status, 200);
    assert.equal(after.headers.get('x-survey-ids'), id);
    assert.notEqual(after.headers.get('etag'), before.headers.get('etag'));
    assert.ok(Buffer.from(await after.arrayBuffer()).equals(beforeBody), 'the same raster, so the same tile bytes');
  });

  test('writes the access-log line, with the key redacted', async () => {
    const before = api.logs.length;
    await api.get(`/tiles/v3/Vert/${inside}.jpg?apikey=${key}`);
    const lines = api.logs.slice(before).filter((line) => line.includes('"msg":"request"'));
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /apikey=\[REDACTED\]/);
    assert.ok(!(lines[0] as string).includes(key));
  });

  describe('takes the common requests and declines the rest before counting them', () => {
    let server: Server;
    let base: string;
    const declined: string[] = [];
    const state = { draining: false };
    /** For each request the lane took: whether its answer was written before node's call to the handler returned. */
    const atOnce: boolean[] = [];

    before(async () => {
      const lane = new TileLane({ keys: api.services.accounts, tiles: api.services.tiles, clock: () => NOW, state });
      lane.router = tileRouter(api.app);
      lane.log = api.app.log;
      const handle = lane.handler((request, response) => {
        declined.push(`${request.method} ${request.url}`);
        response.writeHead(418).end();
      });
      server = createServer((request, response) => {
        handle(request, response);
        if (response.statusCode !== 418) atOnce.push(response.writableEnded);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test('a plain tile request is answered by the lane', async () => {
      declined.length = 0;
      for (const path of [
        `/tiles/v3/Vert/${inside}.jpg?apikey=${key}`,
        `/tiles/v3/surveys/${survey.id}/North/${inside}.png?apikey=${key}`,
        `/tiles/v3/North/${edge}.img?apikey=${key}`,
      ]) {
        const r = await fetch(`${base}${path}`);
        assert.equal(r.status, 200, path);
        assert.match(r.headers.get('content-type') ?? '', /^image\//);
      }
      assert.deepEqual(declined, []);
    });

    test('a repeated stored tile is answered in the very call node:http made, a new one once drawn', async () => {
      const own = await createKey(api.services, 'lane-at-once');
      const ask = async (path: string, init?: RequestInit) => {
        const r = await fetch(`${base}${path}`, init);
        await r.arrayBuffer();
        return r;
      };
      // A filter no request had: a query of its own, so the tile core draws (reads) it the first time.
      const path = `/tiles/v3/Vert/${stored}.jpg?apikey=${own.key}&since=2001-02-03`;
      atOnce.length = 0;
      const first = await ask(path);
      assert.equal(first.status, 200);
      await ask(path);
      const third = await ask(path);
      assert.equal(third.status, 200);
      assert.equal(third.headers.get('x-ratelimit-remaining'), '2997', 'every request counted');
      const revalidated = await ask(path, { headers: { 'if-none-match': first.headers.get('etag') ?? '' } });
      assert.equal(revalidated.status, 304);
      // The first: an unverified key and an unknown tile; the second is drawn again and remembered.
      assert.deepEqual(atOnce, [false, false, true, true]);
    });

    test('bad input and unknown keys go to fastify, uncounted', async () => {
      const limited = await createKey(api.services, 'lane-declines');
      await api.services.accounts.setTileRateLimit(limited.account.id, 2, 60);
      const k = limited.key;
      const declinedPaths = [
        `/tiles/v3/Vert/25/0/0.jpg?apikey=${k}`,
        `/tiles/v3/Vert/${inside}.gif?apikey=${k}`,
        `/tiles/v3/vert/${inside}.jpg?apikey=${k}`,
        `/tiles/v3/Vert/${inside}.jpg?apikey=${k}&apikey=${k}`,
        `/tiles/v3/Vert/${inside}.jpg?apikey=${k}&since=yesterday`,
        `/tiles/v3/Vert/${inside}.jpg?apikey=${k}&since=2025-07-01&until=2025-01-01`,
        `/tiles/v3/Vert/${inside}.jpg?apikey=${k}&include=bad%20tag`,
        `/tiles/v3/Vert/${inside}.jpg?apikey=${k}&mosaic=oldest`,
        `/tiles/v3/Vert/${inside}.jpg?apikey=nadir_000000000000_${'A'.repeat(43)}`,
        `/tiles/v3/Vert/${inside}.jpg`,
        `/tiles/v3/Vert/${inside}.jpg/?apikey=${k}`,
        `/coverage/v1?apikey=${k}`,
      ];
      for (const path of declinedPaths) {
        declined.length = 0;
        const r = await fetch(`${base}${path}`);
        assert.equal(r.status, 418, path);
        assert.deepEqual(declined, [`GET ${path}`]);
      }
      declined.length = 0;
      assert.equal((await fetch(`${base}/tiles/v3/Vert/${inside}.jpg?apikey=${k}`, { method: 'POST' })).status, 418);
      state.draining = true;
      assert.equal((await fetch(`${base}/tiles/v3/Vert/${inside}.jpg?apikey=${k}`)).status, 418);
      state.draining = false;
      assert.equal(declined.length, 2);
      // None of that counted: the key's two requests are all still there.
      for (const remaining of ['1', '0']) {
        const r = await fetch(`${base}/tiles/v3/Vert/${inside}.jpg?apikey=${k}`);
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('x-ratelimit-remaining'), remaining);
      }
      assert.equal((await fetch(`${base}/tiles/v3/Vert/${inside}.jpg?apikey=${k}`)).status, 429);
    });
  });
});
