/**
 * The client's STAC, TileJSON, WMTS and DsmChange calls and the `change` and `stac search`
 * commands against a real `nadir serve` over the demo town: what they return is what the server
 * serves, and a change is billed as an image (once per token).
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MemoryTokenStore, NadirClient, nativeImageSize } from '@nadir/client';
import sharp from 'sharp';
import { gdalinfo } from '../support/fixtures.js';
import { type DemoServer, nadirClient, startDemoServer } from './demo-server.js';

const MID = '0b8e4d27-91c3-4f6a-b2e5-7c9d1a3e5f02'; // 2025-04-02
const NEW = 'd3a5f7c1-6e2b-4c89-8f14-5b0a9e2c7d03'; // 2025-10-20, after the hurricane
// The destroyed house of docs/api.md's DsmChange example.
const HOUSE = { point: { lon: -85.41831106198826, lat: 29.94528969653108 }, radius: 12 };

/** The tile of a lon/lat at a zoom (Web Mercator, XYZ). */
function tileAt(lon: number, lat: number, z: number) {
  const n = 2 ** z;
  const rad = (lat * Math.PI) / 180;
  return {
    z,
    x: Math.floor(((lon + 180) / 360) * n),
    y: Math.floor(((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * n),
  };
}

describe('GIS and DsmChange from a real nadir serve', () => {
  let demo: DemoServer;
  before(async () => {
    demo = await startDemoServer();
  });
  after(() => demo?.close());

  test('STAC search walked page by page to the end is every survey of the catalogue over the town, newest first', async () => {
    const { apiKey } = await demo.account('client-stac');
    const client = new NadirClient({ baseUrl: demo.url, apiKey });
    const collection = await client.stacCollection();
    const [west, south, east, north] = collection.extent.spatial.bbox[0] as [number, number, number, number];
    const ids: string[] = [];
    for await (const item of client.stacSearch({ bbox: [west, south, east, north], limit: 1 })) ids.push(item.id);
    const coverage = [];
    const centre = { lon: (west + east) / 2, lat: (south + north) / 2 };
    for await (const survey of client.surveys({
      aoi: { point: centre, radius: 100 },
      resources: ['Vert'],
      overlap: 'partial',
    }))
      coverage.push(survey.id);
    assert.equal(ids.length, 3, 'the demo town has three surveys');
    assert.deepEqual(ids, coverage, "the catalogue's order, as coverage lists it");
    assert.equal(ids[0], NEW);
    // With the key in the header no link carries it, and the walk still reaches the end.
    const header = new NadirClient({ baseUrl: demo.url, apiKey, sendKeyIn: 'header' });
    const viaHeader: string[] = [];
    for await (const item of header.stacItems({ limit: 2 })) viaHeader.push(item.id);
    assert.deepEqual(viaHeader, ids);
    const later: string[] = [];
    for await (const item of client.stacSearch({ datetime: '2025-01-01T00:00:00Z/..' })) later.push(item.id);
    assert.deepEqual(later, [NEW, MID]);
    const landing = await client.stacLanding();
    assert.ok(landing.conformsTo.some((c) => c.includes('item-search')));
    const wrong = await client.stacItem('no-such-survey').catch((error: unknown) => error);
    assert.equal((wrong as { code?: string }).code, 'NOT_FOUND');
  });

  test("TileJSON's template fetches a real tile; WMTS capabilities list the Vert layer", async () => {
    const { apiKey } = await demo.account('client-tilejson');
    const client = new NadirClient({ baseUrl: demo.url, apiKey });
    const layer = await client.tileJson({ type: 'Vert', since: '2025-01-01' });
    const [west, south, east, north] = layer.bounds as [number, number, number, number];
    const tile = tileAt((west + east) / 2, (south + north) / 2, layer.maxzoom as number);
    const url = (layer.tiles[0] as string)
      .replace('{z}', String(tile.z))
      .replace('{x}', String(tile.x))
      .replace('{y}', String(tile.y));
    const response = await fetch(url);
    assert.equal(response.status, 200, url);
    const meta = await sharp(new Uint8Array(await response.arrayBuffer())).metadata();
    assert.deepEqual([meta.width, meta.height], [256, 256]);
    const one = await client.tileJson({ type: 'Vert', surveyId: MID });
    assert.match(one.tiles[0] as string, new RegExp(`/surveys/${MID}/Vert/`));
    const xml = await client.wmtsCapabilities();
    assert.match(xml, /<ows:Identifier>Vert<\/ows:Identifier>/);
    assert.equal((await fetch(client.wmtsCapabilitiesUrl())).status, 200);
  });

  test('DsmChange.json through the client is the server’s figures, billed once with a DetailDsm on the same token', async () => {
    const { name, apiKey } = await demo.account('client-change');
    const client = new NadirClient({ baseUrl: demo.url, apiKey, tokenStore: new MemoryTokenStore() });
    const surveys = [];
    for await (const survey of client.surveys({ aoi: HOUSE, resources: ['DetailDsm'] })) surveys.push(survey);
    const gsd = surveys.find((s) => s.id === NEW)?.pixelSizes?.DetailDsm as number;
    const { size } = nativeImageSize(HOUSE.radius, gsd);
    const figures = await client.dsmChangeFigures({ after: NEW, baseline: MID, aoi: HOUSE, size });
    const token = await client.transactionToken(HOUSE);
    const direct = new URL(`/staticmap/v2/surveys/${NEW}/DsmChange.json`, demo.url);
    for (const [k, v] of Object.entries({
      transactionToken: token,
      point: `${HOUSE.point.lon},${HOUSE.point.lat}`,
      radius: '12',
      size: `${size}x${size}`,
      baseline: MID,
    }))
      direct.searchParams.set(k, v);
    assert.deepEqual(figures, await (await fetch(direct)).json());
    assert.equal(figures.after.id, NEW);
    assert.equal(figures.baseline.id, MID);
    assert.ok(figures.loss.area > 50, `the destroyed house is lost: ${figures.loss.area} m²`);
    const dsm = await client.imagery({ surveyId: NEW, type: 'DetailDsm', format: 'tif', aoi: HOUSE, size });
    assert.equal(dsm.status, 200);
    await dsm.arrayBuffer();
    assert.equal(await demo.transactions(name), 1, 'the change, the DetailDsm and the direct call: one transaction');
    const tile = await client.dsmChangeTile({
      tile: tileAt(HOUSE.point.lon, HOUSE.point.lat, 19),
      after: NEW,
      baseline: MID,
    });
    assert.equal(tile?.contentType, 'image/png');
    assert.deepEqual(tile?.surveyIds, [NEW, MID]);
    assert.equal(await demo.transactions(name), 1, 'tiles are not transactions');
  });

  test('nadir-client change prints the destroyed house, billed once for both runs; stac search lists the town', async () => {
    const { name, apiKey } = await demo.account('client-change-cli');
    // The user's token file, as a home directory would hold it: the second run reuses the token.
    const tokens = join(demo.scratch, 'state', 'nadir-client', 'tokens.json');
    const env = { NADIR_URL: demo.url, NADIR_API_KEY: apiKey, NADIR_TOKEN_FILE: tokens };
    const point = `${HOUSE.point.lon},${HOUSE.point.lat}`;
    const json = await nadirClient(env, 'change', '--point', point, '--radius', '12', '--json');
    assert.equal(json.code, 0, json.stderr);
    const figures = JSON.parse(json.stdout) as {
      loss: { area: number };
      after: { id: string };
      baseline: { id: string };
    };
    assert.ok(figures.loss.area > 50, `${figures.loss.area} m² lost`);
    assert.deepEqual([figures.after.id, figures.baseline.id], [NEW, MID]);
    const text = await nadirClient(env, 'change', '--point', point, '--radius', '12');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^lost +${figures.loss.area.toLocaleString('en-US')} m²`, 'm'));
    // The issue: every run of change was billed as a new transaction.
    assert.equal(await demo.transactions(name), 1, 'two runs of change, one transaction');
    const stac = await nadirClient(env, 'stac', 'search', '--bbox', '-180,-85,180,85', '--limit', '2');
    assert.equal(stac.code, 0, stac.stderr);
    assert.equal(stac.stdout.trim().split('\n').length, 3);
    assert.match(stac.stdout, new RegExp(`^2025-10-20  ${NEW}`));
  });

  test('nadir-client download --types DsmChange: the change beside the DSMs, on their grid, one transaction', async () => {
    const { name, apiKey } = await demo.account('client-change-download');
    const env = { NADIR_URL: demo.url, NADIR_API_KEY: apiKey };
    const out = join(demo.scratch, 'change');
    const point = `${HOUSE.point.lon},${HOUSE.point.lat}`;
    const args = ['download', '--point', point, '--radius', '12', '--types', 'DsmChange,DetailDsm', '--latest'];
    const result = await nadirClient(env, ...args, '--out', out);
    assert.equal(result.code, 0, result.stderr);
    const files = (await readdir(out)).filter((file) => !file.startsWith('.')).sort();
    const area = `${point}_12m_80px`;
    assert.deepEqual(files, [
      `2025-10-20_${NEW}_DetailDsm_${area}.tif`,
      `2025-10-20_${NEW}_DsmChange_2025-04-02_${MID}_${area}.tif`,
    ]);
    const [dsm, change] = await Promise.all(files.map((file) => gdalinfo(join(out, file))));
    assert.deepEqual(change?.size, dsm?.size);
    assert.deepEqual(change?.geoTransform, dsm?.geoTransform);
    assert.equal(await demo.transactions(name), 1);
  });
});
