/**
 * TileJSON and WMTS (issue 21) over a real `nadir serve` on the demo town, read by the clients
 * that use them: GDAL's WMTS driver (what QGIS opens WMTS with) through gdalinfo and
 * gdal_translate, whose pixels must be the served tiles' pixels; TileJSON's bounds and zooms
 * against the surveys' own (as STAC states them); the WMTS tile route against the tile endpoint.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { lonLatToMercator, ORIGIN_SHIFT, tileForMercator } from '../../src/geo/web-mercator.js';
import { run, tempDir } from '../support/fixtures.js';
import { type GisServer, MID, NEW, OLD, startGisServer } from './demo-server.js';
import { BLOCK_OF_FOUR, rgba } from './tile-pixels.js';

/** A JSON document, read field by field; every field read is asserted on. */
// biome-ignore lint/suspicious/noExplicitAny: the documents under test are what is being checked
type Json = Record<string, any>;

/** The RGB of pixels with alpha > 0 and the alpha of all: what a reader of transparent pixels may differ in is left out. */
function samePixels(a: Buffer, b: Buffer): number {
  let differing = 0;
  for (let i = 0; i < a.length; i += 4) {
    const alpha = a[i + 3] as number;
    if (alpha !== b[i + 3]) differing++;
    else if (alpha > 0 && (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2])) differing++;
  }
  return differing;
}

describe('TileJSON and WMTS over the demo town', () => {
  let gis: GisServer;
  let scratch: { path: string; remove: () => Promise<void> };
  const items = new Map<string, Json>();

  before(async () => {
    gis = await startGisServer();
    scratch = await tempDir('gis-wmts');
    const page = (await (await gis.get('/stac/v1/search')).json()) as Json;
    for (const item of page.features as Json[]) items.set(item.id, item);
  });
  after(async () => {
    await gis?.server.stop();
    await scratch?.remove();
  });

  async function tileJson(path: string, how: 'query' | 'header' = 'query'): Promise<Json> {
    const response = await gis.get(path, how);
    assert.equal(response.status, 200, path);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    return (await response.json()) as Json;
  }

  /** The lon/lat box and the Vert zooms of some surveys, from their STAC items. */
  function expected(ids: string[]) {
    const boxes = ids.map((id) => items.get(id)?.bbox as number[]);
    const tiles = ids.map((id) => items.get(id)?.assets.Vert_tiles as Json);
    return {
      bounds: [
        Math.min(...boxes.map((b) => b[0] as number)),
        Math.min(...boxes.map((b) => b[1] as number)),
        Math.max(...boxes.map((b) => b[2] as number)),
        Math.max(...boxes.map((b) => b[3] as number)),
      ],
      minzoom: Math.min(...tiles.map((t) => t['nadir:min_zoom'])),
      maxzoom: Math.max(...tiles.map((t) => t['nadir:max_zoom'])),
    };
  }

  test("TileJSON 3.0.0 of each layer: the matching surveys' bounds and zooms, the template with the key", async () => {
    assert.equal(items.size, 3);
    for (const type of ['Vert', 'North', 'South', 'East', 'West']) {
      const json = await tileJson(`/tiles/v3/${type}/tilejson.json`);
      assert.equal(json.tilejson, '3.0.0');
      assert.equal(json.scheme, 'xyz');
      assert.ok(json.attribution);
      assert.deepEqual(json.tiles, [`${gis.base}/tiles/v3/${type}/{z}/{x}/{y}.img?apikey=${gis.key}`]);
      if (type === 'Vert') {
        const { bounds, minzoom, maxzoom } = expected([OLD, MID, NEW]);
        assert.deepEqual([json.bounds, json.minzoom, json.maxzoom], [bounds, minzoom, maxzoom]);
      }
    }
    const hurricane = await tileJson('/tiles/v3/Vert/tilejson.json?include=disaster:hurricane&since=2025-01-01');
    const { bounds, minzoom, maxzoom } = expected([NEW]);
    assert.deepEqual([hurricane.bounds, hurricane.minzoom, hurricane.maxzoom], [bounds, minzoom, maxzoom]);
    const template = new URL(hurricane.tiles[0] as string);
    assert.equal(template.searchParams.get('include'), 'disaster:hurricane');
    assert.equal(template.searchParams.get('since'), '2025-01-01');
    const older = await tileJson('/tiles/v3/Vert/tilejson.json?until=2024-12-31');
    assert.deepEqual(older.bounds, expected([OLD]).bounds);
    const none = await tileJson('/tiles/v3/Vert/tilejson.json?include=disaster:fire');
    assert.equal(none.bounds, undefined, 'nothing matches: no bounds to claim');

    // The template, filled in at the layer's centre, is a tile of the matching survey.
    const [lon, lat] = hurricane.center as number[];
    const { x, y } = tileForMercator(...lonLatToMercator(lon as number, lat as number), maxzoom);
    const url = (hurricane.tiles[0] as string)
      .replace('{z}', `${maxzoom}`)
      .replace('{x}', `${x}`)
      .replace('{y}', `${y}`);
    const tile = await fetch(url);
    assert.equal(tile.status, 200);
    assert.equal(tile.headers.get('x-survey-ids'), NEW);

    const headerJson = await tileJson('/tiles/v3/Vert/tilejson.json', 'header');
    assert.deepEqual(headerJson.tiles, [`${gis.base}/tiles/v3/Vert/{z}/{x}/{y}.img`], 'a header key stays out');
  });

  test('TileJSON refuses what the tile endpoints refuse', async () => {
    const cases: [string, number, string][] = [
      ['/tiles/v3/Vert/tilejson.json?since=yesterday', 400, 'since'],
      ['/tiles/v3/Vert/tilejson.json?include=a,,b', 400, 'include'],
      ['/tiles/v3/Vert/tilejson.json?since=2025-01-01&until=2024-01-01', 400, 'since'],
      ['/tiles/v3/Oblique/tilejson.json', 400, 'contentType'],
      ['/tiles/v3/DetailDsm/contours/tilejson.json', 400, 'style'],
      [`/tiles/v3/surveys/${'0'.repeat(8)}/Vert/tilejson.json`, 404, ''],
    ];
    for (const [path, status, parameter] of cases) {
      const response = await gis.get(path);
      const body = (await response.json()) as Json;
      assert.equal(response.status, status, `${path}: ${JSON.stringify(body)}`);
      if (parameter) assert.equal(body.parameter, parameter, path);
    }
    assert.equal((await gis.get('/tiles/v3/Vert/tilejson.json', 'none')).status, 401);
  });

  test('WMTS capabilities: Vert, tag layers, a Time dimension of capture dates, templates that are served', async () => {
    const response = await gis.get('/wmts/1.0.0/WMTSCapabilities.xml');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/xml/);
    const xml = await response.text();
    const layers = [...xml.matchAll(/<\/ows:WGS84BoundingBox><ows:Identifier>([^<]+)</g)].map((m) => m[1]);
    // The product layers after Vert (issue 34, item 4), one each; the tag layers are Vert's.
    assert.deepEqual(layers, [
      'Vert',
      'TrueOrtho',
      'DetailDsm-relief',
      'DetailDsm-hillshade',
      'Vert:disaster',
      'Vert:disaster:hurricane',
    ]);
    assert.match(
      xml,
      /<ows:Identifier>Time<\/ows:Identifier><Default>current<\/Default><Current>true<\/Current><Value>current<\/Value><Value>2025-10-20<\/Value><Value>2025-04-02<\/Value><Value>2024-03-14<\/Value>/,
    );
    const templates = [...xml.matchAll(/template="([^"]+)"/g)].map((m) => (m[1] as string).replace(/&amp;/g, '&'));
    // Two per format and layer (issue 34): the newest with nothing to fill in, then {Time}; heights in PNG only.
    assert.equal(templates.length, 4 * 4 + 2 * 2);
    const { x, y } = tileForMercator(...lonLatToMercator(-85.4168, 29.9463), 19);
    for (const template of templates) {
      assert.equal(new URL(template.replace(/[{}]/g, '')).searchParams.get('apikey'), gis.key);
      const url = template
        .replace('{Time}', 'current')
        .replace('{TileMatrix}', '19')
        .replace('{TileRow}', `${y}`)
        .replace('{TileCol}', `${x}`);
      const tile = await fetch(url);
      assert.equal(tile.status, 200, url);
      assert.equal(tile.headers.get('content-type'), url.includes('.png?') ? 'image/png' : 'image/jpeg');
    }
  });

  test("a WMTS tile is the tile endpoint's tile: Time as until, a tag layer as include", async () => {
    const { x, y } = tileForMercator(...lonLatToMercator(-85.4168, 29.9463), 19);
    const pairs: [string, string][] = [
      [`/wmts/1.0.0/Vert/default/current/GoogleMapsCompatible/19/${y}/${x}.png`, `/tiles/v3/Vert/19/${x}/${y}.png`],
      [
        `/wmts/1.0.0/Vert/default/2024-03-14/GoogleMapsCompatible/19/${y}/${x}.png`,
        `/tiles/v3/Vert/19/${x}/${y}.png?until=2024-03-14`,
      ],
      [
        `/wmts/1.0.0/Vert/default/2025-04-02/GoogleMapsCompatible/19/${y}/${x}.jpg?since=2025-01-01`,
        `/tiles/v3/Vert/19/${x}/${y}.jpg?until=2025-04-02&since=2025-01-01`,
      ],
      [
        `/wmts/1.0.0/Vert%3Adisaster/default/current/GoogleMapsCompatible/19/${y}/${x}.png`,
        `/tiles/v3/Vert/19/${x}/${y}.png?include=disaster`,
      ],
      [
        `/wmts/1.0.0/TrueOrtho/default/2025-04-02/GoogleMapsCompatible/19/${y}/${x}.jpg`,
        `/tiles/v3/TrueOrtho/19/${x}/${y}.jpg?until=2025-04-02`,
      ],
      [
        `/wmts/1.0.0/DetailDsm-relief/default/current/GoogleMapsCompatible/19/${y}/${x}.png?SERVICE=WMTS`,
        `/tiles/v3/DetailDsm/relief/19/${x}/${y}.png`,
      ],
      [
        `/wmts/1.0.0/DetailDsm-hillshade/default/2024-03-14/GoogleMapsCompatible/19/${y}/${x}.png`,
        `/tiles/v3/DetailDsm/hillshade/19/${x}/${y}.png?until=2024-03-14`,
      ],
    ];
    for (const [wmts, tiles] of pairs) {
      const [a, b] = await Promise.all([gis.get(wmts), gis.get(tiles)]);
      assert.equal(a.status, 200, wmts);
      assert.equal(b.status, 200, tiles);
      assert.equal(a.headers.get('x-survey-ids'), b.headers.get('x-survey-ids'), wmts);
      assert.deepEqual(Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer()), wmts);
    }
    const bad: [string, number, string][] = [
      [`/wmts/1.0.0/Vert/default/yesterday/GoogleMapsCompatible/19/${y}/${x}.png`, 400, 'Time'],
      [`/wmts/1.0.0/North/default/current/GoogleMapsCompatible/19/${y}/${x}.png`, 400, 'layer'],
      [`/wmts/1.0.0/Vert/default/current/GoogleMapsCompatible/19/${y}/${x}.gif`, 400, 'format'],
      [`/wmts/1.0.0/Vert/default/current/GoogleMapsCompatible/19/${2 ** 19}/${x}.png`, 400, 'y'],
      [
        `/wmts/1.0.0/Vert%3Adisaster/default/current/GoogleMapsCompatible/19/${y}/${x}.png?include=disaster`,
        400,
        'include',
      ],
      [`/wmts/1.0.0/Vert/default/2000-01-01/GoogleMapsCompatible/19/${y}/${x}.png`, 404, ''],
    ];
    for (const [path, status, parameter] of bad) {
      const response = await gis.get(path);
      const body = (await response.json()) as Json;
      assert.equal(response.status, status, `${path}: ${JSON.stringify(body)}`);
      if (parameter) assert.equal(body.parameter, parameter, path);
    }
    assert.equal((await gis.get('/wmts/1.0.0/WMTSCapabilities.xml', 'none')).status, 401);
    assert.equal((await gis.get('/wmts/1.0.0/WMTSCapabilities.xml?until=nope')).status, 400);
  });

  test("GDAL's WMTS driver opens the capabilities and reads the served tiles' pixels", async () => {
    const source = `WMTS:${gis.base}/wmts/1.0.0/WMTSCapabilities.xml?apikey=${gis.key},layer=Vert`;
    // GDAL keeps WMTS tiles in ./gdalwmscache by default: a stale copy would hide what is served now.
    const noCache = [
      '--config',
      'GDAL_ENABLE_WMS_CACHE',
      'NO',
      '--config',
      'GDAL_DEFAULT_WMS_CACHE_PATH',
      scratch.path,
    ];
    const { stdout } = await run('gdalinfo', ['-json', ...noCache, source], { maxBuffer: 16 << 20 });
    const info = JSON.parse(stdout) as { geoTransform: number[]; size: number[]; bands: unknown[] };
    const [originX, resolution, , originY] = info.geoTransform as [number, number, number, number];
    const vert = await tileJson('/tiles/v3/Vert/tilejson.json');
    const z = vert.maxzoom as number;
    assert.ok(Math.abs(resolution - (2 * ORIGIN_SHIFT) / (256 * 2 ** z)) < 1e-9, 'read at the deepest zoom');
    assert.equal(info.bands.length, 4, 'RGBA: the PNG tiles, with transparency');

    // A 2 x 2 block of tiles around the middle of the town, read by GDAL and fetched as tiles.
    const [lon, lat] = vert.center as number[];
    const { x, y } = tileForMercator(...lonLatToMercator(lon as number, lat as number), z);
    const column = Math.round((x * 256 * resolution - ORIGIN_SHIFT - originX) / resolution);
    const row = Math.round((originY - (ORIGIN_SHIFT - y * 256 * resolution)) / resolution);
    assert.ok(
      column >= 0 && row >= 0 && column + 512 <= (info.size[0] as number) && row + 512 <= (info.size[1] as number),
    );
    const out = join(scratch.path, 'window.png');
    await run('gdal_translate', [
      ...noCache,
      '-q',
      '-of',
      'PNG',
      '-srcwin',
      `${column}`,
      `${row}`,
      '512',
      '512',
      source,
      out,
    ]);
    const read = await rgba(out);
    assert.deepEqual([read.width, read.height], [512, 512]);
    let opaque = 0;
    for (const [dx, dy] of BLOCK_OF_FOUR) {
      const response = await gis.get(`/tiles/v3/Vert/${z}/${x + dx}/${y + dy}.png`);
      assert.equal(response.status, 200);
      const tile = await rgba(Buffer.from(await response.arrayBuffer()));
      const window = Buffer.alloc(256 * 256 * 4);
      for (let r = 0; r < 256; r++) {
        const start = ((dy * 256 + r) * 512 + dx * 256) * 4;
        read.data.copy(window, r * 256 * 4, start, start + 256 * 4);
      }
      assert.equal(samePixels(window, tile.data), 0, `tile ${z}/${x + dx}/${y + dy}`);
      for (let i = 3; i < tile.data.length; i += 4) if (tile.data[i] === 255) opaque++;
    }
    assert.ok(opaque > 4 * 256 * 256 * 0.5, 'the window is mostly imagery, not emptiness compared with emptiness');
  });
});
