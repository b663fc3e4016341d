/**
 * WMTS as the OGC clients of issue 34 use it, over a real `nadir serve` on the demo town: GDAL's
 * WMTS driver reading a whole layer from the capabilities URL alone, OWSLib (Debian
 * python3-owslib, through wmts-clients.py) reading the service and its tiles without dimension
 * values, the KVP binding beside the RESTful one, and OWS ExceptionReports, parsed, for what OGC
 * requests get wrong. The tiles must be the tile endpoint's own.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { lonLatToMercator, tileForMercator } from '../../src/geo/web-mercator.js';
import { run, tempDir } from '../support/fixtures.js';
import { type GisServer, NEW, startGisServer } from './demo-server.js';
import { rgba } from './tile-pixels.js';

/** A JSON document, read field by field; every field read is asserted on. */
// biome-ignore lint/suspicious/noExplicitAny: the documents under test are what is being checked
type Json = Record<string, any>;

/** Debian's python3, where python3-owslib is (a python3 earlier on PATH, pyenv's say, may lack it). */
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const SCRIPT = join(import.meta.dirname, 'wmts-clients.py');
const CAPABILITIES = '/wmts/1.0.0/WMTSCapabilities.xml';
const OWS_REPORT = '{http://www.opengis.net/ows/1.1}ExceptionReport';

describe('WMTS for OGC clients: GDAL, OWSLib, KVP and ExceptionReports over the demo town', () => {
  let gis: GisServer;
  let scratch: { path: string; remove: () => Promise<void> };
  // A tile of the town where every survey has imagery (tilejson-wmts.test.ts uses it too).
  const { x, y } = tileForMercator(...lonLatToMercator(-85.4168, 29.9463), 19);

  before(async () => {
    gis = await startGisServer();
    scratch = await tempDir('gis-wmts-clients');
  });
  after(async () => {
    await gis?.server.stop();
    await scratch?.remove();
  });

  /** `path` with the key, as an absolute URL (for the clients). */
  function keyed(path: string): string {
    const url = new URL(path, gis.base);
    url.searchParams.set('apikey', gis.key);
    return url.href;
  }

  /** A KVP GetTile of this WMTS, with `names` spelled as given (KVP names are case-insensitive). */
  function kvpTile(parameters: Record<string, string>): string {
    const query = new URLSearchParams({
      SERVICE: 'WMTS',
      REQUEST: 'GetTile',
      VERSION: '1.0.0',
      LAYER: 'Vert',
      STYLE: 'default',
      TILEMATRIXSET: 'GoogleMapsCompatible',
      TILEMATRIX: '19',
      TILEROW: `${y}`,
      TILECOL: `${x}`,
      FORMAT: 'image/png',
      ...parameters,
    });
    return `${CAPABILITIES}?${query}`;
  }

  async function bytes(
    path: string,
  ): Promise<{ status: number; type: string | null; body: Buffer; ids: string | null }> {
    const response = await gis.get(path);
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: Buffer.from(await response.arrayBuffer()),
      ids: response.headers.get('x-survey-ids'),
    };
  }

  async function clients(asked: Json): Promise<Json> {
    const { stdout } = await run(PYTHON, [SCRIPT, JSON.stringify(asked)], { maxBuffer: 16 << 20 });
    return JSON.parse(stdout) as Json;
  }

  test('capabilities: KVP GetCapabilities, ServiceProvider, OperationsMetadata, a template without {Time}', async () => {
    const rest = await gis.get(CAPABILITIES);
    const kvp = await gis.get(`${CAPABILITIES}?service=WMTS&request=GetCapabilities&version=1.0.0`);
    assert.equal(kvp.status, 200);
    assert.match(kvp.headers.get('content-type') ?? '', /^application\/xml/);
    const xml = await rest.text();
    assert.equal(await kvp.text(), xml, 'KVP GetCapabilities is the same document');
    assert.match(xml, /<ows:ServiceProvider><ows:ProviderName>nadir<\/ows:ProviderName>/);
    const kvpHref = `${gis.base}${CAPABILITIES}?apikey=${gis.key}&amp;`;
    for (const operation of ['GetCapabilities', 'GetTile']) {
      const found = new RegExp(`<ows:Operation name="${operation}">(.*?)</ows:Operation>`).exec(xml)?.[1] ?? '';
      assert.ok(found.includes(`<ows:Get xlink:href="${kvpHref}">`), `${operation}: ${found}`);
      assert.match(found, /<ows:Value>KVP<\/ows:Value>/);
      assert.match(found, /<ows:Value>RESTful<\/ows:Value>/);
    }
    // Per layer: the newest first, with nothing to fill in; the {Time} template last.
    const vert = /<ows:Identifier>Vert<\/ows:Identifier>(.*?)<\/Layer>/.exec(xml)?.[1] ?? '';
    const templates = [...vert.matchAll(/template="([^"]+)"/g)].map((m) => (m[1] as string).replace(/&amp;/g, '&'));
    assert.deepEqual(
      templates.map((t) => new URL(t.replace(/[{}]/g, '')).pathname.split('/')[5]),
      ['current', 'current', 'Time', 'Time'],
    );
    for (const template of templates)
      assert.equal(new URL(template.replace(/[{}]/g, '')).searchParams.get('SERVICE'), 'WMTS');
    assert.match(xml, /<ows:Identifier>Time<\/ows:Identifier><Default>current<\/Default>/);
  });

  test("KVP GetTile and the ResourceURLs' tiles are the tile endpoint's tiles", async () => {
    const rest = (time: string, layer = 'Vert', extension = 'png') =>
      `/wmts/1.0.0/${encodeURIComponent(layer)}/default/${encodeURIComponent(time)}/GoogleMapsCompatible/19/${y}/${x}.${extension}?SERVICE=WMTS`;
    const pairs: [string, string][] = [
      [kvpTile({}), `/tiles/v3/Vert/19/${x}/${y}.png`],
      // Names in any case, as OGC KVP allows.
      [
        `${CAPABILITIES}?service=wmts&Request=GetTile&layer=Vert&style=&tilematrixset=GoogleMapsCompatible&TileMatrix=19&tilerow=${y}&tilecol=${x}&format=image/jpeg`,
        `/tiles/v3/Vert/19/${x}/${y}.jpg`,
      ],
      [kvpTile({ TIME: '2024-03-14' }), `/tiles/v3/Vert/19/${x}/${y}.png?until=2024-03-14`],
      [kvpTile({ LAYER: 'Vert:disaster' }), `/tiles/v3/Vert/19/${x}/${y}.png?include=disaster`],
      [
        `${kvpTile({ TIME: '2025-04-02' })}&since=2025-01-01`,
        `/tiles/v3/Vert/19/${x}/${y}.png?until=2025-04-02&since=2025-01-01`,
      ],
      [rest('current'), `/tiles/v3/Vert/19/${x}/${y}.png`],
      // The {Time} template as a client that fills in no dimension sends it: the Default.
      [rest('{Time}'), `/tiles/v3/Vert/19/${x}/${y}.png`],
      [rest('2025-04-02', 'Vert', 'jpg'), `/tiles/v3/Vert/19/${x}/${y}.jpg?until=2025-04-02`],
      [rest('current', 'Vert:disaster:hurricane'), `/tiles/v3/Vert/19/${x}/${y}.png?include=disaster:hurricane`],
    ];
    for (const [wmts, tiles] of pairs) {
      const [a, b] = await Promise.all([bytes(wmts), bytes(tiles)]);
      assert.equal(a.status, 200, `${wmts}: ${a.body.toString('utf8').slice(0, 300)}`);
      assert.equal(b.status, 200, tiles);
      assert.equal(a.type, b.type, wmts);
      assert.equal(a.ids, b.ids, wmts);
      assert.deepEqual(a.body, b.body, wmts);
    }
    const limited = await gis.get(kvpTile({}));
    assert.ok(limited.headers.get('x-ratelimit-limit'), 'a KVP tile counts against the rate limit like a tile');
  });

  test('a tile with no imagery: an empty tile for OGC requests, still a 404 for the tile endpoints', async () => {
    const nowhere = { TILEROW: '0', TILECOL: '0' };
    const png = await bytes(kvpTile(nowhere));
    assert.equal(png.status, 200);
    assert.equal(png.type, 'image/png');
    const transparent = await rgba(png.body);
    assert.deepEqual([transparent.width, transparent.height], [256, 256]);
    for (let i = 3; i < transparent.data.length; i += 4) assert.equal(transparent.data[i], 0, 'fully transparent');
    const jpeg = await bytes(kvpTile({ ...nowhere, FORMAT: 'image/jpeg' }));
    assert.equal(jpeg.status, 200);
    assert.equal(jpeg.type, 'image/jpeg');
    const black = await rgba(jpeg.body);
    assert.deepEqual([black.width, black.height], [256, 256]);
    assert.ok(
      black.data.every((value, i) => i % 4 === 3 || value <= 2),
      'black, as JPEG tiles show no imagery',
    );
    const resourceUrl = await bytes('/wmts/1.0.0/Vert/default/current/GoogleMapsCompatible/19/0/0.png?SERVICE=WMTS');
    assert.deepEqual([resourceUrl.status, resourceUrl.body], [200, png.body]);
    for (const path of [
      '/tiles/v3/Vert/19/0/0.png',
      '/wmts/1.0.0/Vert/default/current/GoogleMapsCompatible/19/0/0.png',
    ]) {
      const response = await gis.get(path);
      assert.equal(response.status, 404, path);
      assert.equal(((await response.json()) as Json).code, 'NO_IMAGERY', path);
    }
  });

  test('OWSLib: the provider, and gettile() for Vert, a tag layer and the product layers with no dimension value', async () => {
    const tile = (layer: string, format = 'image/png', time?: string) => ({
      layer,
      tilematrix: '19',
      row: y,
      column: x,
      format,
      time,
    });
    const read = await clients({
      capabilities: keyed(CAPABILITIES),
      tiles: [
        tile('Vert'),
        tile('Vert:disaster:hurricane'),
        tile('Vert', 'image/jpeg', '2024-03-14'),
        tile('Vert', 'image/png', '2000-01-01'),
        tile('TrueOrtho', 'image/jpeg'),
        tile('DetailDsm-relief'),
        tile('DetailDsm-hillshade', 'image/png', '2024-03-14'),
      ],
      probes: [],
    });
    assert.equal(read.provider.name, 'nadir');
    assert.equal(read.provider.url, `${gis.base}/`);
    assert.equal(read.restonly, false, 'OWSLib takes the KVP binding');
    assert.deepEqual(read.operations, ['GetCapabilities', 'GetTile']);
    assert.deepEqual(read.layers, [
      'DetailDsm-hillshade',
      'DetailDsm-relief',
      'TrueOrtho',
      'Vert',
      'Vert:disaster',
      'Vert:disaster:hurricane',
    ]);
    const expected = [
      `/wmts/1.0.0/Vert/default/current/GoogleMapsCompatible/19/${y}/${x}.png`,
      `/wmts/1.0.0/Vert%3Adisaster%3Ahurricane/default/current/GoogleMapsCompatible/19/${y}/${x}.png`,
      `/tiles/v3/Vert/19/${x}/${y}.jpg?until=2024-03-14`,
    ];
    // The product layers (issue 34, item 4), each the tile endpoint's own tile.
    const products: [number, string][] = [
      [4, `/tiles/v3/TrueOrtho/19/${x}/${y}.jpg`],
      [5, `/tiles/v3/DetailDsm/relief/19/${x}/${y}.png`],
      [6, `/tiles/v3/DetailDsm/hillshade/19/${x}/${y}.png?until=2024-03-14`],
    ];
    for (const [i, path] of products) {
      const served = await bytes(path);
      assert.equal(served.status, 200, path);
      assert.ok(read.tiles[i].bytes, `${path}: ${JSON.stringify(read.tiles[i])}`);
      assert.deepEqual(Buffer.from(read.tiles[i].bytes as string, 'base64'), served.body, path);
    }
    for (const [i, path] of expected.entries()) {
      const served = await bytes(path);
      assert.equal(served.status, 200, path);
      assert.ok(read.tiles[i].bytes, `${path}: ${JSON.stringify(read.tiles[i])}`);
      assert.deepEqual(Buffer.from(read.tiles[i].bytes as string, 'base64'), served.body, path);
    }
    assert.equal((await bytes(expected[1] as string)).ids, NEW, 'the tag layer is the hurricane survey');
    assert.match(read.tiles[3].error, /TIME 2000-01-01 is not a capture date/, 'an unlisted TIME is refused');
  });

  test('ExceptionReports, parsed: missing parameter, bad TileMatrix, unlisted Time, unknown layer, bad key', async () => {
    const probes: [string, number, string, string | null][] = [
      [keyed(kvpTile({}).replace(`&TILEROW=${y}`, '')), 400, 'MissingParameterValue', 'TILEROW'],
      [keyed(kvpTile({ TILEMATRIX: '99' })), 400, 'InvalidParameterValue', 'TILEMATRIX'],
      [keyed(kvpTile({ TILEMATRIX: 'nineteen' })), 400, 'InvalidParameterValue', 'TILEMATRIX'],
      [keyed(kvpTile({ TILEROW: `${2 ** 19}` })), 400, 'TileOutOfRange', 'TILEROW'],
      [keyed(kvpTile({ TIME: '2000-01-01' })), 400, 'InvalidParameterValue', 'TIME'],
      [keyed(kvpTile({ TIME: 'yesterday' })), 400, 'InvalidParameterValue', 'TIME'],
      [
        keyed(`/wmts/1.0.0/Vert/default/2000-01-01/GoogleMapsCompatible/19/${y}/${x}.png?SERVICE=WMTS`),
        400,
        'InvalidParameterValue',
        'TIME',
      ],
      [keyed(kvpTile({ LAYER: 'North' })), 400, 'InvalidParameterValue', 'LAYER'],
      [keyed(kvpTile({ LAYER: 'Vert:disaster:fire' })), 400, 'InvalidParameterValue', 'LAYER'],
      [keyed(kvpTile({ FORMAT: 'image/gif' })), 400, 'InvalidParameterValue', 'FORMAT'],
      [keyed(kvpTile({ STYLE: 'fancy' })), 400, 'InvalidParameterValue', 'STYLE'],
      [keyed(kvpTile({ TILEMATRIXSET: 'WorldCRS84Quad' })), 400, 'InvalidParameterValue', 'TILEMATRIXSET'],
      [keyed(kvpTile({ REQUEST: 'GetFeatureInfo' })), 400, 'OperationNotSupported', 'REQUEST'],
      [keyed(`${CAPABILITIES}?SERVICE=WMS&REQUEST=GetCapabilities`), 400, 'InvalidParameterValue', 'SERVICE'],
      [`${gis.base}${kvpTile({})}&apikey=not-a-key`, 401, 'NoApplicableCode', null],
      [`${gis.base}${kvpTile({})}`, 401, 'NoApplicableCode', null],
      [`${gis.base}${CAPABILITIES}?SERVICE=WMTS&REQUEST=GetCapabilities`, 401, 'NoApplicableCode', null],
    ];
    const read = await clients({ capabilities: keyed(CAPABILITIES), tiles: [], probes: probes.map(([url]) => url) });
    for (const [i, [url, status, code, locator]] of probes.entries()) {
      const found = read.probes[i] as Json;
      assert.deepEqual(
        [found.status, found.type, found.root, found.version, found.exceptionCode, found.locator],
        [status, 'application/xml', OWS_REPORT, '1.0.0', code, locator],
        `${url}: ${JSON.stringify(found)}`,
      );
      assert.ok(typeof found.text === 'string' && found.text.length > 0, url);
      assert.doesNotMatch(found.text as string, /not-a-key/, 'a key is never echoed');
    }
  });

  test("GDAL's WMTS driver reads a whole layer from the capabilities URL alone, with no ERROR", async () => {
    const out = join(scratch.path, 'vert.png');
    const { stderr } = await run(
      'gdal_translate',
      [
        // GDAL's own settings, its tile cache on (a 404 prints its ERROR as GDAL looks there), but
        // in a fresh folder rather than ./gdalwmscache, where a stale copy would hide what is served.
        '--config',
        'GDAL_DEFAULT_WMS_CACHE_PATH',
        join(scratch.path, 'gdalwmscache'),
        '-q',
        '-of',
        'PNG',
        '-outsize',
        '800',
        '0',
        `WMTS:${keyed(CAPABILITIES)},layer=Vert`,
        out,
      ],
      { maxBuffer: 16 << 20 },
    );
    assert.doesNotMatch(stderr, /ERROR/, stderr);
    const read = await rgba(out);
    assert.equal(read.width, 800);
    let opaque = 0;
    let empty = 0;
    for (let i = 3; i < read.data.length; i += 4) {
      if (read.data[i] === 255) opaque++;
      else if (read.data[i] === 0) empty++;
    }
    const pixels = read.width * read.height;
    assert.ok(opaque > pixels * 0.2, `imagery drawn: ${opaque} of ${pixels} pixels opaque`);
    assert.ok(empty > 0, 'and the box has places without imagery, read as transparent');
  });
});
