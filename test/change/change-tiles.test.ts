/**
 * DsmChange tiles over the demo town: every pixel the colour of the gdalwarp reference's change
 * on the tile's grid, transparent where unchanged within the threshold; pairs by id or by dates.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_SEED, destroyedHouses } from '@nadir/demo-town';
import { changeColour } from '../../src/raster/change-ramp.js';
import { errorBody } from '../api/helpers.js';
import { run, tempDir } from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { BEFORE, type ChangeTown, changeTown, HURRICANE, lonLatOfLocal, OLDEST } from './change-town.js';

const NODATA = -9999;
const Z = 19;
const HALF = Math.PI * 6378137;

/** The z/x/y holding a lon/lat, and its EPSG:3857 bounds, from the formulas. */
function tileAt(lon: number, lat: number, z: number) {
  const x = (lon * HALF) / 180;
  const y = 6378137 * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
  const size = (2 * HALF) / 2 ** z;
  const column = Math.floor((x + HALF) / size);
  const row = Math.floor((HALF - y) / size);
  const minX = -HALF + column * size;
  const maxY = HALF - row * size;
  return { z, x: column, y: row, bounds: [minX, maxY - size, minX + size, maxY] };
}

describe('DsmChange tiles', () => {
  let town: ChangeTown;
  let scratch: { path: string; remove: () => Promise<void> };
  // A destroyed house inside both surveys.
  const house = destroyedHouses(DEFAULT_SEED).find((h) => Math.abs(h.x + 28) < 1 && Math.abs(h.y + 134) < 1);
  assert.ok(house, 'the demo plan has its destroyed house at (-28, -134)');
  const tile = tileAt(house.lon, house.lat, Z);
  const path = `/tiles/v3/DsmChange/${tile.z}/${tile.x}/${tile.y}.png`;

  before(async () => {
    town = await changeTown();
    scratch = await tempDir('change-tiles');
  });
  after(async () => {
    await town?.close();
    await scratch?.remove();
  });

  async function reference(surveyId: string): Promise<Float64Array> {
    const asset = town.surveys.get(surveyId)?.assets.DetailDsm;
    assert.ok(asset);
    const out = join(scratch.path, `ref-${surveyId}.tif`);
    const [minX, minY, maxX, maxY] = tile.bounds.map(String) as [string, string, string, string];
    await run('gdalwarp', [
      ...['-overwrite', '-q', '-t_srs', 'EPSG:3857', '-te', minX, minY, maxX, maxY, '-ts', '256', '256'],
      ...['-r', 'bilinear', '-ot', 'Float32', '-dstnodata', `${NODATA}`, join(town.dataDir, asset.uri), out],
    ]);
    return (await readRaster(out)).bands[0] as Float64Array;
  }

  async function png(response: Response, name: string) {
    const file = join(scratch.path, name);
    await writeFile(file, Buffer.from(await response.arrayBuffer()));
    return readRaster(file);
  }

  test('every pixel is the ramp colour of the reference change, transparent within the threshold', async () => {
    const response = await town.api.get(`${path}?apikey=${town.apiKey}&after=${HURRICANE}&baseline=${BEFORE}`);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('content-type'), 'image/png');
    assert.equal(response.headers.get('x-survey-ids'), `${HURRICANE},${BEFORE}`);
    assert.ok(response.headers.get('x-ratelimit-limit'));
    // Answered by its own fastify route: the tile lane (the stored-tile hot path) never takes it.
    assert.doesNotMatch(response.headers.get('server-timing') ?? '', /\blane;dur=/);
    assert.match(response.headers.get('cache-control') ?? '', /max-age=86400/);
    const picture = await png(response, 'tile.png');
    const [afterHeights, beforeHeights] = await Promise.all([reference(HURRICANE), reference(BEFORE)]);
    let lost = 0;
    for (let i = 0; i < 256 * 256; i++) {
      const a = afterHeights[i] as number;
      const b = beforeHeights[i] as number;
      const d = a - b;
      const alpha = picture.bands[3]?.[i];
      // Skip values that sit on the threshold to within float rounding.
      if (Math.abs(Math.abs(d) - 0.5) < 1e-3) continue;
      if (a === NODATA || b === NODATA || Math.abs(d) <= 0.5) {
        assert.equal(alpha, 0, `pixel ${i}: ${d}`);
        continue;
      }
      assert.equal(alpha, 255, `pixel ${i}: ${d}`);
      const colour = changeColour(d);
      for (let k = 0; k < 3; k++) {
        assert.ok(Math.abs((picture.bands[k]?.[i] as number) - colour[k]!) <= 2, `pixel ${i} band ${k}`);
      }
      if (d < -2) lost++;
    }
    // The destroyed house is in the tile (0.24 m pixels at z19 here: a few hundred pixels at least).
    assert.ok(lost > 300, `lost pixels ${lost}`);
  });

  test('since/until choose the newest and oldest surveys with DetailDsm; ETag and 304', async () => {
    const first = await town.api.get(`${path}?apikey=${town.apiKey}&since=2025-01-01`);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-survey-ids'), `${HURRICANE},${BEFORE}`);
    assert.match(first.headers.get('cache-control') ?? '', /max-age=600/);
    const etag = first.headers.get('etag');
    assert.ok(etag);
    const again = await town.api.get(`${path}?apikey=${town.apiKey}&since=2025-01-01`, {
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.status, 304);
    const all = await town.api.get(`${path}?apikey=${town.apiKey}`);
    assert.equal(all.headers.get('x-survey-ids'), `${HURRICANE},${OLDEST}`);
    assert.notEqual(all.headers.get('etag'), etag);
  });

  test('a threshold above every change leaves the tile transparent', async () => {
    const response = await town.api.get(`${path}?apikey=${town.apiKey}&after=${HURRICANE}&threshold=100`);
    assert.equal(response.status, 200);
    const picture = await png(response, 'empty.png');
    assert.ok(picture.bands[3]?.every((alpha) => alpha === 0));
  });

  test('refusals: the error table, with the rate-limit headers', async () => {
    const cases: [string, number, string][] = [
      [`${path}?apikey=${town.apiKey}&baseline=${BEFORE}`, 400, 'INVALID_PARAMETER'],
      [`${path.replace('.png', '.jpg')}?apikey=${town.apiKey}`, 400, 'INVALID_PARAMETER'],
      [`${path}?apikey=${town.apiKey}&threshold=-1`, 400, 'INVALID_PARAMETER'],
      [`${path}?apikey=${town.apiKey}&after=${HURRICANE}&baseline=${HURRICANE}`, 400, 'SAME_SURVEY'],
      [`${path}?apikey=${town.apiKey}&after=${BEFORE}&baseline=${HURRICANE}`, 400, 'BASELINE_NOT_EARLIER'],
      [`${path}?apikey=${town.apiKey}&since=2025-06-01`, 404, 'NO_IMAGERY'],
      [`/tiles/v3/DsmChange/${Z + 3}/${tile.x * 8}/${tile.y * 8}.png?apikey=${town.apiKey}`, 404, 'NO_IMAGERY'],
      [`${path}`, 401, 'API_KEY_INVALID'],
    ];
    for (const [url, status, code] of cases) {
      const response = await town.api.get(url);
      const body = await errorBody(response);
      assert.equal(response.status, status, `${url}: ${JSON.stringify(body)}`);
      assert.equal(body.code, code, url);
      if (status !== 401) assert.ok(response.headers.get('x-ratelimit-remaining'), url);
    }
    // North-east of town: never flown in 2024, so no common heights with it.
    const ne = tileAt(lonLatOfLocal(250, 180).lon, lonLatOfLocal(250, 180).lat, Z);
    const response = await town.api.get(
      `/tiles/v3/DsmChange/${Z}/${ne.x}/${ne.y}.png?apikey=${town.apiKey}&after=${HURRICANE}&baseline=${OLDEST}`,
    );
    assert.equal(response.status, 404);
    assert.equal((await errorBody(response)).code, 'NO_IMAGERY');
  });

  test("every tile answered 200 counts in the account's tile usage, refusals and 304s do not", async () => {
    const { services } = town.api;
    const tilesCounted = async () => {
      await services.tileUsage.flush();
      return (await services.accounts.usage(town.accountId)).months.reduce((sum, month) => sum + month.tiles, 0);
    };
    const before = await tilesCounted();
    assert.equal((await town.api.get(`${path}?apikey=${town.apiKey}&after=${HURRICANE}`)).status, 200);
    assert.equal((await town.api.get(`${path}?apikey=${town.apiKey}&since=2025-06-01`)).status, 404);
    assert.equal(await tilesCounted(), before + 1);
  });

  test("the OpenAPI document lists both DsmChange endpoints, the tile's path as it reads: {y}.png", async () => {
    const document = (await (await town.api.get('/openapi.json')).json()) as { paths: Record<string, unknown> };
    assert.ok(document.paths['/tiles/v3/DsmChange/{z}/{x}/{y}.png']);
    assert.ok(Object.keys(document.paths).some((p) => p.includes('DsmChange.{format}')));
  });
});
