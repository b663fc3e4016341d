/**
 * Tiles over the demo town, over real HTTP: alignment against GDAL, composites of the three
 * surveys, filters, formats, panorama rotation, pass-through bytes and caching headers.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_LANDMARKS } from '@nadir/demo-town';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { buildServer } from '../../src/api/server.js';
import type { Survey } from '../../src/catalogue/survey.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { partForTile } from '../../src/geo/asset-layout.js';
import { lonLatToMercator, type TileCoord, tileBounds } from '../../src/geo/web-mercator.js';
import { CogFiles } from '../../src/tiles/cog-files.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';
import { run, tempDir } from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { comparePixels } from '../support/reference.js';
import { exchange } from './raw-http.js';

const STORE = DEMO_LANDMARKS.find((l) => l.id === 'red-roof-store') as (typeof DEMO_LANDMARKS)[number];
const OLD = '6f1c2a9e-3b7d-4e51-9a0c-2d4e8b1f7a01'; // 2024-03-14
const MID = '0b8e4d27-91c3-4f6a-b2e5-7c9d1a3e5f02'; // 2025-04-02
const NEW = 'd3a5f7c1-6e2b-4c89-8f14-5b0a9e2c7d03'; // 2025-10-20, disaster:hurricane
const NOW = new Date('2026-11-22T12:00:00Z');

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

interface Decoded {
  rgba: Buffer;
  /** Pixels with alpha 255. */
  opaque: number;
}

/** The tile containing a point, and the point's pixel in that tile. */
function locate(lon: number, lat: number, z: number): TileCoord & { px: number; py: number } {
  const [mx, my] = lonLatToMercator(lon, lat);
  const size = (2 * 20037508.342789244) / 2 ** z;
  const fx = (mx + 20037508.342789244) / size;
  const fy = (20037508.342789244 - my) / size;
  const x = Math.floor(fx);
  const y = Math.floor(fy);
  return { z, x, y, px: (fx - x) * 256, py: (fy - y) * 256 };
}

async function decode(body: Buffer): Promise<Decoded> {
  const { data, info } = await sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  assert.equal(info.width, 256);
  assert.equal(info.height, 256);
  let opaque = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] === 255) opaque++;
  return { rgba: data, opaque };
}

/** Centroid of the pixels close to `color`, or undefined when there are too few. */
function centroidOf(rgba: Buffer, color: readonly number[], tolerance: number): { x: number; y: number } | undefined {
  let sx = 0;
  let sy = 0;
  let n = 0;
  for (let i = 0; i < 256 * 256; i++) {
    const o = i * 4;
    if (rgba[o + 3] !== 255) continue;
    const d = Math.max(...[0, 1, 2].map((k) => Math.abs((rgba[o + k] as number) - (color[k] as number))));
    if (d <= tolerance) {
      sx += i % 256;
      sy += Math.floor(i / 256);
      n++;
    }
  }
  return n >= 20 ? { x: sx / n + 0.5, y: sy / n + 0.5 } : undefined;
}

describe('tiles over the demo town', () => {
  let town: DemoTown;
  let services: Services;
  let app: FastifyInstance;
  let base: string;
  let scratch: { path: string; remove: () => Promise<void> };
  const surveys = new Map<string, Survey>();

  before(async () => {
    town = await demoTown();
    scratch = await tempDir('tiles-demo');
    services = await createServices(
      parseConfig({ NADIR_DATA_DIR: town.dataDir, NADIR_LOG_LEVEL: 'silent' }, town.dataDir),
      () => NOW,
    );
    app = await buildServer(services);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    for (const id of [OLD, MID, NEW]) surveys.set(id, (await services.catalogue.get(id)) as Survey);
  });
  after(async () => {
    await app.close();
    await services.close();
    await scratch.remove();
  });

  async function get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    const sep = path.includes('?') ? '&' : '?';
    const r = await fetch(`${base}${path}${sep}apikey=${town.apiKey}`, { headers });
    return { status: r.status, headers: r.headers, body: Buffer.from(await r.arrayBuffer()) };
  }

  async function tile(path: string): Promise<Answer & Decoded> {
    const answer = await get(path);
    assert.equal(answer.status, 200, `${path}: ${answer.status} ${answer.body.toString().slice(0, 200)}`);
    return { ...answer, ...(await decode(answer.body)) };
  }

  function vertAsset(id: string) {
    const asset = surveys.get(id)?.assets.Vert;
    assert.ok(asset);
    return asset;
  }

  const SOURCE = (date: string, type = 'Vert') => join(town.dataDir, 'demo', 'town-20181010', date, `${type}.tif`);

  /** Our tile (as PNG) against gdalwarp of `source` onto the bounds of tile `reference`. */
  async function compareTile(path: string, reference: TileCoord, source: string, resampling: string): Promise<void> {
    const answer = await get(path);
    assert.equal(answer.status, 200, path);
    const name = path.replace(/[^A-Za-z0-9]+/g, '_');
    const ours = join(scratch.path, `${name}.png`);
    await writeFile(ours, answer.body);
    const b = tileBounds(reference);
    const ref = join(scratch.path, `${name}-ref.tif`);
    await run('gdalwarp', [
      ...['-q', '-overwrite', '-t_srs', 'EPSG:3857', '-te', `${b.minX}`, `${b.minY}`, `${b.maxX}`, `${b.maxY}`],
      ...['-ts', '256', '256', '-r', resampling, '-dstalpha', source, ref],
    ]);
    comparePixels(await readRaster(ours, [1, 2, 3]), await readRaster(ref, [1, 2, 3]), 'rgb');
  }

  test('a survey tile at native zoom and from an overview equals gdalwarp of the source to the same bounds', async () => {
    const asset = vertAsset(NEW);
    for (const [z, resampling] of [
      [asset.maxZoom, 'bilinear'],
      [asset.maxZoom - 2, 'average'],
    ] as const) {
      const at = locate(STORE.lon + 0.0005, STORE.lat, z);
      await compareTile(`/tiles/v3/surveys/${NEW}/Vert/${z}/${at.x}/${at.y}.png`, at, SOURCE('2025-10-20'), resampling);
    }
  });

  test('the neighbouring tile does not match that reference (the comparison can fail)', async () => {
    const z = vertAsset(NEW).maxZoom - 2;
    const at = locate(STORE.lon + 0.0005, STORE.lat, z);
    await assert.rejects(
      compareTile(`/tiles/v3/surveys/${NEW}/Vert/${z}/${at.x + 1}/${at.y}.png`, at, SOURCE('2025-10-20'), 'average'),
      assert.AssertionError,
    );
    await assert.rejects(
      compareTile(`/tiles/v3/surveys/${NEW}/Vert/${z}/${at.x}/${at.y + 1}.png`, at, SOURCE('2025-10-20'), 'average'),
      assert.AssertionError,
    );
  });

  test('a fully covered tile is passed through: the bytes are the JPEG stored in the COG', async () => {
    const asset = vertAsset(NEW);
    const z = asset.maxZoom;
    const at = locate(STORE.lon, STORE.lat, z);
    const answer = await get(`/tiles/v3/surveys/${NEW}/Vert/${z}/${at.x}/${at.y}.jpg`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'image/jpeg');
    // The tile's place in the COG (the shard under it, for a sharded asset): column and row from
    // that COG's top-left corner.
    const part = asset.shards ? partForTile(asset.shards, asset.maxZoom, at) : asset;
    assert.ok(part);
    const resolution = (part.bounds.maxX - part.bounds.minX) / part.width;
    const col = Math.round((tileBounds(at).minX - part.bounds.minX) / resolution / 256);
    const row = Math.round((part.bounds.maxY - tileBounds(at).maxY) / resolution / 256);
    const files = new CogFiles(services.storage, 1);
    const stored = await files.with(part.uri, async (cog) => cog.levels[0]?.image.getTile(col, row));
    files.close();
    assert.ok(stored);
    assert.ok(Buffer.from(stored.bytes).equals(answer.body), 'byte-identical to the stored tile');
    const decoded = await decode(answer.body);
    assert.equal(decoded.opaque, 256 * 256);
  });

  /** Every z17 tile over the town, with its location-endpoint answer. */
  async function townTiles(z: number, query = ''): Promise<{ at: TileCoord; answer: Answer }[]> {
    const boxes = [...surveys.values()].map((s) => s.assets.Vert?.bounds).filter((b) => b !== undefined);
    const size = (2 * 20037508.342789244) / 2 ** z;
    const minX = Math.floor((Math.min(...boxes.map((b) => b.minX)) + 20037508.342789244) / size);
    const maxX = Math.floor((Math.max(...boxes.map((b) => b.maxX)) + 20037508.342789244) / size);
    const minY = Math.floor((20037508.342789244 - Math.max(...boxes.map((b) => b.maxY))) / size);
    const maxY = Math.floor((20037508.342789244 - Math.min(...boxes.map((b) => b.minY))) / size);
    const out: { at: TileCoord; answer: Answer }[] = [];
    for (let y = minY; y <= maxY; y++) {
      for (let x = minX; x <= maxX; x++) {
        out.push({ at: { z, x, y }, answer: await get(`/tiles/v3/Vert/${z}/${x}/${y}.png${query}`) });
      }
    }
    return out;
  }

  /** RGBA of one survey's own tile. */
  async function surveyTile(id: string, at: TileCoord): Promise<Decoded> {
    const answer = await get(`/tiles/v3/surveys/${id}/Vert/${at.z}/${at.x}/${at.y}.png`);
    if (answer.status === 404) return { rgba: Buffer.alloc(256 * 256 * 4), opaque: 0 };
    assert.equal(answer.status, 200);
    return decode(answer.body);
  }

  /** Each opaque pixel of `composite` equals the first survey in `order` that has it; the rest are transparent. */
  async function assertComposite(composite: Decoded, at: TileCoord, order: string[]): Promise<Set<string>> {
    const layers = await Promise.all(order.map((id) => surveyTile(id, at)));
    const drawn = new Set<string>();
    for (let i = 0; i < 256 * 256; i++) {
      const o = i * 4;
      const from = layers.findIndex((layer) => layer.rgba[o + 3] === 255);
      if (from < 0) {
        assert.equal(composite.rgba[o + 3], 0, `pixel ${i} has no survey, so it is transparent`);
        continue;
      }
      drawn.add(order[from] as string);
      const want = (layers[from] as Decoded).rgba.subarray(o, o + 4);
      const got = composite.rgba.subarray(o, o + 4);
      if (!want.equals(got))
        assert.fail(`pixel ${i % 256},${Math.floor(i / 256)}: ${[...got]} but survey ${order[from]} has ${[...want]}`);
    }
    return drawn;
  }

  test('location tiles composite newest first, each survey filling only what newer ones left empty', async () => {
    const tiles = await townTiles(17);
    const composites = tiles.filter(({ answer }) => (answer.headers.get('x-survey-ids') ?? '').split(',').length >= 2);
    assert.ok(composites.length >= 2, `the town has overlapping surveys (${composites.length} composite tiles)`);
    for (const { at, answer } of composites.slice(0, 4)) {
      const ids = (answer.headers.get('x-survey-ids') as string).split(',');
      assert.deepEqual(
        ids,
        [NEW, MID, OLD].filter((id) => ids.includes(id)),
        'X-Survey-Ids lists the surveys drawn, newest first',
      );
      const drawn = await assertComposite(await decode(answer.body), at, [NEW, MID, OLD]);
      assert.deepEqual([...drawn].sort(), [...ids].sort());
    }
    const empty = tiles.filter(({ answer }) => answer.status === 404);
    assert.ok(empty.length > 0, 'the scan reaches beyond the town');
    for (const { answer } of empty) assert.equal(JSON.parse(answer.body.toString()).code, 'NO_IMAGERY');
  });

  test('mosaic=earliest puts the oldest survey on top', async () => {
    const tiles = await townTiles(17, '?mosaic=earliest');
    const composites = tiles.filter(({ answer }) => (answer.headers.get('x-survey-ids') ?? '').split(',').length >= 2);
    assert.ok(composites.length >= 2);
    for (const { at, answer } of composites.slice(0, 3)) {
      await assertComposite(await decode(answer.body), at, [OLD, MID, NEW]);
    }
  });

  test('since, until, include and exclude choose which surveys are drawn', async () => {
    const at = locate(STORE.lon, STORE.lat, 17);
    const path = `/tiles/v3/Vert/17/${at.x}/${at.y}.png`;
    const idsOf = async (query: string) => {
      const answer = await get(`${path}${query}`);
      return answer.status === 404 ? '404' : (answer.headers.get('x-survey-ids') ?? '');
    };
    assert.equal((await idsOf('')).split(',')[0], NEW);
    assert.equal((await idsOf('?until=2025-05-01')).split(',')[0], MID);
    assert.equal(await idsOf('?since=2025-05-01'), NEW);
    assert.equal(await idsOf('?until=2024-12-31'), OLD);
    // Relative ages count back from today (pinned to 2026-11-22): 12M is 2025-11-22, after every survey.
    assert.equal(await idsOf('?since=12M'), '404');
    assert.equal((await idsOf('?since=24M')).split(',').includes(OLD), false);
    assert.equal(await idsOf('?include=disaster'), NEW);
    assert.equal(await idsOf('?include=disaster:hurricane'), NEW);
    assert.equal(await idsOf('?include=disaster:fire'), '404');
    assert.equal((await idsOf('?exclude=disaster')).split(',')[0], MID);
    assert.equal(await idsOf('?include=disaster&exclude=disaster:hurricane'), '404');
    const filtered = await tile(`${path}?until=2025-05-01`);
    await assertComposite(filtered, at, [MID, OLD]);
  });

  test('img is JPEG for a full tile and PNG with transparency for a partial one; jpg and png are fixed', async () => {
    const tiles = await townTiles(16);
    const partial = tiles.find(({ answer }) => answer.status === 200 && answer.body.length > 0);
    assert.ok(partial);
    const full = locate(STORE.lon, STORE.lat, 19);
    const fullPath = `/tiles/v3/Vert/19/${full.x}/${full.y}`;
    const imgFull = await get(`${fullPath}.img`);
    assert.equal(imgFull.headers.get('content-type'), 'image/jpeg');
    assert.equal((await get(`${fullPath}.png`)).headers.get('content-type'), 'image/png');

    const partials = [];
    for (const { at } of tiles) {
      const answer = await get(`/tiles/v3/Vert/${at.z}/${at.x}/${at.y}.img`);
      if (answer.status !== 200) continue;
      if (answer.headers.get('content-type') === 'image/png') partials.push({ at, answer });
      else assert.equal((await decode(answer.body)).opaque, 256 * 256, 'img sends JPEG only for full tiles');
    }
    assert.ok(partials.length > 0, 'the edge of the town gives partial tiles');
    const { at, answer } = partials[0] as { at: TileCoord; answer: Answer };
    const decoded = await decode(answer.body);
    assert.ok(decoded.opaque > 0 && decoded.opaque < 256 * 256, 'partly transparent');
    const jpg = await get(`/tiles/v3/Vert/${at.z}/${at.x}/${at.y}.jpg`);
    assert.equal(jpg.headers.get('content-type'), 'image/jpeg', 'jpg is JPEG even when partial');
    assert.equal((await sharp(jpg.body).metadata()).format, 'jpeg');
  });

  test('no tile above the max zoom, nor outside every footprint', async () => {
    const asset = vertAsset(NEW);
    const inside = locate(STORE.lon, STORE.lat, asset.maxZoom + 1);
    const above = await get(`/tiles/v3/Vert/${inside.z}/${inside.x}/${inside.y}.jpg`);
    assert.equal(above.status, 404);
    assert.equal(JSON.parse(above.body.toString()).code, 'NO_IMAGERY');
    const far = await get('/tiles/v3/Vert/17/100/100.jpg');
    assert.equal(far.status, 404);
    assert.equal(far.headers.get('content-type'), 'application/json; charset=utf-8');
  });

  test('panorama tiles are rotated so the viewing direction is up: the red store lands where the rotation puts it', async () => {
    // The store's pixel in the north-up tile, and where each rotation (clockwise) would move it.
    let at = locate(STORE.lon, STORE.lat, 17);
    for (const z of [16, 17, 18]) {
      const candidate = locate(STORE.lon, STORE.lat, z);
      if (Math.hypot(candidate.px - 128, candidate.py - 128) > Math.hypot(at.px - 128, at.py - 128)) at = candidate;
    }
    const rotated = (degrees: number) => {
      const [x, y] = [at.px, at.py];
      if (degrees === 90) return { x: 256 - y, y: x };
      if (degrees === 180) return { x: 256 - x, y: 256 - y };
      if (degrees === 270) return { x: y, y: 256 - x };
      return { x, y };
    };
    const expected = { North: 0, East: 270, South: 180, West: 90 } as const;
    for (const [direction, degrees] of Object.entries(expected)) {
      const answer = await tile(`/tiles/v3/surveys/${MID}/${direction}/${at.z}/${at.x}/${at.y}.png`);
      const found = centroidOf(answer.rgba, STORE.color, 45);
      assert.ok(found, `${direction}: the red roof is in the tile`);
      const distances = [0, 90, 180, 270].map((d) => Math.hypot(found.x - rotated(d).x, found.y - rotated(d).y));
      const nearest = [0, 90, 180, 270][distances.indexOf(Math.min(...distances))];
      assert.equal(nearest, degrees, `${direction}: roof at ${found.x.toFixed(0)},${found.y.toFixed(0)}`);
      // 8 m of roof seen at 45 degrees leans about 8 m: a few pixels at these zooms.
      assert.ok(
        Math.min(...distances) < 24,
        `${direction}: ${Math.min(...distances).toFixed(1)} px from the expected spot`,
      );
    }
  });

  test('ETag before pixels: If-None-Match gives 304 with no body; other formats and filters have other ETags', async () => {
    const at = locate(STORE.lon, STORE.lat, 18);
    const path = `/tiles/v3/Vert/18/${at.x}/${at.y}.jpg`;
    const first = await get(path);
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[A-Za-z0-9_-]{27}"$/);
    assert.equal(first.headers.get('cache-control'), 'public, max-age=600');
    const again = await get(path, { 'if-none-match': etag as string });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.get('etag'), etag);
    assert.ok(again.headers.get('x-ratelimit-remaining'));
    assert.equal((await get(path, { 'if-none-match': `W/${etag}, "other"` })).status, 304);
    assert.equal((await get(path, { 'if-none-match': '"something-else"' })).status, 200);
    const png = await get(path.replace('.jpg', '.png'));
    assert.notEqual(png.headers.get('etag'), etag);
    const older = await get(`${path}?until=2025-05-01`);
    assert.notEqual(older.headers.get('etag'), etag);
    const survey = await get(`/tiles/v3/surveys/${NEW}/Vert/18/${at.x}/${at.y}.jpg`);
    assert.equal(survey.headers.get('cache-control'), 'public, max-age=86400');
  });

  test('HEAD answers with the headers of GET and no body', async () => {
    const at = locate(STORE.lon, STORE.lat, 18);
    const r = await fetch(`${base}/tiles/v3/Vert/18/${at.x}/${at.y}.jpg?apikey=${town.apiKey}`, { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'image/jpeg');
    assert.equal((await r.arrayBuffer()).byteLength, 0);
  });

  test('answers waiting to be sent keep their bytes while other tiles are drawn (encode buffers are reused only once sent)', async () => {
    const composites = [...(await townTiles(17)), ...(await townTiles(18))]
      .filter(({ answer }) => (answer.headers.get('x-survey-ids') ?? '').split(',').length >= 2)
      .map(({ at }) => at);
    assert.ok(composites.length >= 4, `${composites.length} composite tiles`);
    // The lane's answers, and fastify's (the lane leaves percent-encoded queries to it), as PNG and JPEG.
    const paths = composites.flatMap(({ z, x, y }) =>
      ['png', 'jpg'].flatMap((format) => [
        `/tiles/v3/Vert/${z}/${x}/${y}.${format}?apikey=${town.apiKey}`,
        `/tiles/v3/North/${z}/${x}/${y}.${format}?since=2020%2D01%2D01&apikey=${town.apiKey}`,
      ]),
    );
    const expected = await Promise.all(
      paths.map(async (path) => Buffer.from(await (await fetch(base + path)).arrayBuffer())),
    );
    // One connection asks for every tile at once and reads nothing: answers queue behind the first
    // ones in the server, unsent, while the same tiles are drawn again for other connections.
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause();
    // More than the kernel's socket buffers hold (about 10 MB on loopback), so that answers wait in the server.
    const queued = Array.from({ length: 8 }, () => paths).flat();
    socket.write(queued.map((path) => `GET ${path} HTTP/1.1\r\nHost: nadir\r\n\r\n`).join(''));
    for (let round = 0; round < 3; round++) {
      const again = await Promise.all(
        paths.map(async (path) => Buffer.from(await (await fetch(base + path)).arrayBuffer())),
      );
      for (const [i, body] of again.entries()) {
        assert.ok(body.equals(expected[i] as Buffer), `${paths[i]}: the same bytes again`);
      }
    }
    const reading = exchange(Number(port), [], Array<boolean>(queued.length).fill(false), {
      socket,
      timeoutMs: 60_000,
    });
    socket.resume();
    const { responses } = await reading;
    socket.destroy();
    assert.equal(responses.length, queued.length);
    responses.forEach((response, i) => {
      assert.equal(response.status, 200);
      const want = expected[i % paths.length] as Buffer;
      assert.ok(response.body.equals(want), `${queued[i]} (#${i}): the queued answer kept its bytes`);
    });
  });
});
