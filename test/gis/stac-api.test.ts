/**
 * The STAC API (issue 21) over a real `nadir serve` on the demo town: every document valid against
 * the STAC 1.0.0 and STAC API 1.0.0 schemas, paging followed to the end, the search parameters,
 * the caller's authentication carried in links, and bad input as STAC API errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type GisServer, MID, NEW, OLD, startGisServer } from './demo-server.js';
import { type StacValidators, schemaErrors, stacValidators } from './stac-schemas.js';

/** A JSON document, read field by field; every field read is asserted on. */
// biome-ignore lint/suspicious/noExplicitAny: the documents under test are what is being checked
type Json = Record<string, any>;

describe('STAC API over the demo town', () => {
  let gis: GisServer;
  let validate: StacValidators;

  before(async () => {
    validate = stacValidators();
    gis = await startGisServer();
  });
  after(async () => {
    await gis?.server.stop();
  });

  async function json(path: string, status = 200, how: 'query' | 'header' | 'none' = 'query'): Promise<Json> {
    const response = await gis.get(path, how);
    const body = (await response.json()) as Json;
    assert.equal(response.status, status, `${path}: ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  }

  function valid(name: keyof StacValidators, document: unknown, what: string): void {
    const check = validate[name];
    assert.ok(check(document), `${what} is not a valid ${name}: ${schemaErrors(check)}`);
  }

  /**
   * Every href of a document: absolute, on this server, no template braces (but in the `xyz`
   * links of web-map-links, whose href is the template), the key as sent.
   */
  function checkHrefs(document: unknown, keyInUrl: boolean): void {
    const templates: string[] = [];
    const text = JSON.stringify(document, (_key, value) => {
      if (value && typeof value === 'object' && (value as Json).rel === 'xyz') {
        templates.push((value as Json).href);
        return undefined;
      }
      return value;
    });
    for (const template of templates) {
      assert.ok(template.startsWith(gis.base), template);
      assert.match(template, /\/\{z\}\/\{x\}\/\{y\}\.img/, 'an xyz link is the template');
      assert.equal(new URL(template).searchParams.get('apikey'), keyInUrl ? gis.key : null, template);
    }
    const hrefs = text.match(/"href":"[^"]*"/g) ?? [];
    assert.ok(hrefs.length > 0);
    for (const quoted of hrefs) {
      const href = quoted.slice(8, -1);
      assert.ok(href.startsWith(gis.base), href);
      assert.doesNotMatch(href, /[{}]/, 'an href is a URI: no template braces');
      if (href.includes('/staticmap/v2/surveys/')) continue; // imagery takes the coverage call's token
      assert.equal(new URL(href).searchParams.get('apikey'), keyInUrl ? gis.key : null, href);
    }
  }

  test('landing page, conformance, collections, the collection and every item are valid STAC', async () => {
    const landing = await json('/stac/v1/');
    valid('landingPage', landing, 'landing page');
    valid('catalog', landing, 'landing page');
    const rels = new Set((landing.links as Json[]).map((link) => link.rel));
    for (const rel of ['self', 'root', 'conformance', 'data', 'search', 'service-desc']) assert.ok(rels.has(rel), rel);
    assert.deepEqual(await json('/stac/v1'), landing, '/stac/v1 without the slash is the landing page too');

    const conformance = await json('/stac/v1/conformance');
    valid('conformance', conformance, 'conformance');
    assert.deepEqual(conformance.conformsTo, landing.conformsTo);
    assert.ok(conformance.conformsTo.includes('https://api.stacspec.org/v1.0.0/item-search'));

    const collections = await json('/stac/v1/collections');
    valid('collections', collections, 'collections');
    const collection = await json('/stac/v1/collections/surveys');
    valid('collection', collection, 'collection');
    assert.deepEqual(collections.collections, [collection]);
    assert.deepEqual(collection.summaries['nadir:tags'], ['disaster:hurricane']);
    assert.deepEqual(collection.extent.temporal.interval[0].length, 2);

    const items = await json('/stac/v1/collections/surveys/items?limit=10');
    valid('itemCollection', items, 'items');
    assert.deepEqual(
      items.features.map((item: Json) => item.id),
      [NEW, MID, OLD],
      'newest first',
    );
    for (const listed of items.features as Json[]) {
      const item = await json(`/stac/v1/collections/surveys/items/${listed.id}`);
      valid('item', item, `item ${listed.id}`);
      assert.deepEqual(item, listed, 'an item alone is the item in the listing');
      checkHrefs(item, true);
    }
    for (const document of [landing, collections, collection, items]) checkHrefs(document, true);
  });

  test('an item says what the survey is: footprint, photo times, tags, GSD, tiles and rasters', async () => {
    const item = await json(`/stac/v1/collections/surveys/items/${NEW}`);
    assert.equal(item.geometry.type, 'MultiPolygon');
    const [minX, minY, maxX, maxY] = item.bbox as [number, number, number, number];
    for (const [x, y] of item.geometry.coordinates.flat(2) as [number, number][]) {
      assert.ok(x >= minX && x <= maxX && y >= minY && y <= maxY, 'bbox holds the footprint');
    }
    assert.ok(minX > -85.43 && maxX < -85.4 && minY > 29.93 && maxY < 29.96, 'in Mexico Beach');
    const { properties, assets } = item;
    assert.equal(properties['nadir:capture_date'], '2025-10-20');
    assert.deepEqual(properties['nadir:tags'], ['disaster:hurricane']);
    assert.ok(properties.start_datetime <= properties.end_datetime);
    assert.equal(properties.datetime, properties.start_datetime);
    assert.ok(properties.gsd > 0.05 && properties.gsd < 1, `gsd ${properties.gsd}`);
    for (const type of ['Vert', 'North', 'South', 'East', 'West']) {
      const tiles = assets[`${type}_tiles`];
      assert.deepEqual(tiles.roles, ['tiles'], type);
      // The TileJSON it points at holds the same template; the template draws this survey.
      const tileJson = (await (await fetch(tiles.href)).json()) as Json;
      assert.deepEqual(tileJson.tiles, [tiles['nadir:xyz']]);
      const [lon, lat] = tileJson.center as [number, number, number];
      const z = tileJson.maxzoom as number;
      const n = 2 ** z;
      const x = Math.floor(((lon + 180) / 360) * n);
      const y = Math.floor(((1 - Math.asinh(Math.tan((lat * Math.PI) / 180)) / Math.PI) / 2) * n);
      const url = (tiles['nadir:xyz'] as string).replace('{z}', `${z}`).replace('{x}', `${x}`).replace('{y}', `${y}`);
      const tile = await fetch(url);
      assert.equal(tile.status, 200, `${type} ${url}`);
      assert.equal(tile.headers.get('x-survey-ids'), NEW);
    }
    for (const type of ['Vert', 'TrueOrtho', 'DetailDsm']) {
      assert.equal(assets[type].href, `${gis.base}/staticmap/v2/surveys/${NEW}/${type}.tif`);
      assert.deepEqual(assets[type].roles, ['data']);
      assert.ok(assets[type].gsd > 0);
    }
  });

  test('paging: next links, followed to the end, visit every survey once, on search and on items', async () => {
    for (const start of ['/stac/v1/search?limit=1', '/stac/v1/collections/surveys/items?limit=2']) {
      const seen: string[] = [];
      let url: string | undefined = new URL(start, gis.base).href;
      url = `${url}&apikey=${gis.key}`;
      let pages = 0;
      while (url) {
        const response = await fetch(url);
        assert.equal(response.status, 200, url);
        assert.match(response.headers.get('content-type') ?? '', /^application\/geo\+json(;|$)/);
        const page = (await response.json()) as Json;
        valid('itemCollection', page, url);
        assert.equal(page.numberMatched, 3);
        assert.equal(page.numberReturned, page.features.length);
        seen.push(...page.features.map((item: Json) => item.id));
        url = (page.links as Json[]).find((link) => link.rel === 'next')?.href;
        assert.ok(++pages <= 3, 'paging ends');
      }
      assert.deepEqual(seen, [NEW, MID, OLD], start);
    }
    // The next page repeats the search and continues it. (An extra parameter sent along, such as
    // a cache buster, is a 400 now: OGC API Features core, stac-extensions.test.ts.)
    const first = await json('/stac/v1/search?datetime=2025-01-01T00:00:00Z/..&limit=1');
    const next = new URL((first.links as Json[]).find((link) => link.rel === 'next')?.href);
    assert.equal(next.searchParams.get('datetime'), '2025-01-01T00:00:00Z/..');
    assert.match(next.searchParams.get('token') ?? '', /^next:/, 'pages by keyset');
    const second = (await (await fetch(next)).json()) as Json;
    assert.deepEqual([first.features[0].id, second.features[0].id], [NEW, MID]);
    // A filtered search counts its matches only when one page holds them all.
    assert.deepEqual([first.numberMatched, second.numberMatched], [undefined, undefined]);
    assert.equal((await json('/stac/v1/search?datetime=2025-01-01T00:00:00Z/..')).numberMatched, 2);
    assert.equal(
      second.links.find((link: Json) => link.rel === 'next'),
      undefined,
    );
    // prev walks back to the page before.
    const back = (await (await fetch(second.links.find((link: Json) => link.rel === 'prev').href)).json()) as Json;
    assert.deepEqual(
      back.features.map((f: Json) => f.id),
      [NEW],
    );
    assert.equal(
      back.links.find((link: Json) => link.rel === 'prev'),
      undefined,
      'nothing before the first page',
    );
    const last = await json('/stac/v1/search?limit=1&offset=2');
    assert.deepEqual(
      last.features.map((f: Json) => f.id),
      [OLD],
    );
    const before = last.links.find((link: Json) => link.rel === 'prev').href;
    assert.deepEqual(
      ((await (await fetch(before)).json()) as Json).features.map((f: Json) => f.id),
      [MID],
    );
    const past = await json('/stac/v1/search?offset=10');
    assert.deepEqual([past.features.length, past.numberMatched], [0, 3]);
    assert.equal((await json('/stac/v1/search?limit=5000')).numberReturned, 3, 'a limit above 1000 is clamped');
  });

  test('search: bbox, intersects, datetime, ids and collections', async () => {
    const ids = async (query: string) => ((await json(`/stac/v1/search?${query}`)).features as Json[]).map((f) => f.id);
    const town = await json(`/stac/v1/collections/surveys/items/${NEW}`);
    const [lon, lat] = [(town.bbox[0] + town.bbox[2]) / 2, (town.bbox[1] + town.bbox[3]) / 2];
    assert.deepEqual(await ids('bbox=-180,-90,180,90'), [NEW, MID, OLD]);
    assert.deepEqual(await ids('bbox=10,10,11,11'), []);
    assert.ok(
      (await ids(`bbox=${lon - 1e-4},${lat - 1e-4},0,${lon + 1e-4},${lat + 1e-4},100`)).includes(NEW),
      '3D bbox',
    );
    const point = encodeURIComponent(JSON.stringify({ type: 'Point', coordinates: [lon, lat] }));
    assert.ok((await ids(`intersects=${point}`)).includes(NEW));
    const far = encodeURIComponent(
      JSON.stringify({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      }),
    );
    assert.deepEqual(await ids(`intersects=${far}`), []);
    assert.deepEqual(await ids('datetime=2025-01-01T00:00:00Z/..'), [NEW, MID]);
    assert.deepEqual(await ids('datetime=../2024-12-31T23:59:59Z'), [OLD]);
    const middle = await json(`/stac/v1/collections/surveys/items/${MID}`);
    assert.deepEqual(await ids(`datetime=${middle.properties.end_datetime}`), [MID], 'an instant within the photos');
    assert.deepEqual(await ids(`ids=${OLD},${NEW}`), [NEW, OLD], 'newest first, as every listing');
    assert.deepEqual(await ids('collections=elsewhere'), []);
    assert.deepEqual(await ids('collections=surveys&limit=1'), [NEW]);
  });

  test('POST /search: the same search in a JSON body, paged by POST links that carry it', async () => {
    const post = async (body: unknown, path = '/stac/v1/search') => {
      const url = new URL(path, gis.base);
      url.searchParams.set('apikey', gis.key);
      return fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    };
    const town = await json(`/stac/v1/collections/surveys/items/${NEW}`);
    const pairs: [unknown, string][] = [
      [{}, ''],
      [{ bbox: [10, 10, 11, 11] }, 'bbox=10,10,11,11'],
      [{ datetime: '2025-01-01T00:00:00Z/..' }, 'datetime=2025-01-01T00:00:00Z/..'],
      [{ ids: [OLD, NEW] }, `ids=${OLD},${NEW}`],
      [{ intersects: town.geometry }, `intersects=${encodeURIComponent(JSON.stringify(town.geometry))}`],
      [{ collections: ['elsewhere'] }, 'collections=elsewhere'],
      [{ sortby: [{ field: 'id', direction: 'asc' }] }, 'sortby=%2Bid'],
      [
        { filter: { op: '=', args: [{ property: 'id' }, MID] }, 'filter-lang': 'cql2-json' },
        `filter=id%3D%27${MID}%27`,
      ],
    ];
    for (const [body, query] of pairs) {
      const response = await post(body);
      const page = (await response.json()) as Json;
      assert.equal(response.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(page).slice(0, 300)}`);
      assert.match(response.headers.get('content-type') ?? '', /^application\/geo\+json(;|$)/);
      valid('itemCollection', page, JSON.stringify(body));
      const got = await json(`/stac/v1/search?${query}`);
      assert.deepEqual(
        page.features.map((f: Json) => f.id),
        got.features.map((f: Json) => f.id),
        JSON.stringify(body),
      );
    }
    // Paging: the next link is a POST of the same search with the next page's token.
    const seen: string[] = [];
    let response = await post({ datetime: '2024-01-01T00:00:00Z/..', limit: 1 });
    for (let pages = 0; ; pages++) {
      assert.equal(response.status, 200);
      const page = (await response.json()) as Json;
      seen.push(...page.features.map((f: Json) => f.id));
      const next = (page.links as Json[]).find((link) => link.rel === 'next');
      if (!next) break;
      assert.equal(next.method, 'POST');
      assert.equal(next.merge, false);
      assert.deepEqual([next.body.datetime, next.body.limit], ['2024-01-01T00:00:00Z/..', 1]);
      assert.match(next.body.token, /^next:/);
      assert.ok(pages < 3, 'paging ends');
      response = await fetch(next.href, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(next.body),
      });
    }
    assert.deepEqual(seen, [NEW, MID, OLD]);
    // Refused as GET refuses: an unknown member, a search parameter in the query, a body that is no search.
    for (const [body, path] of [
      [{ foo: 1 }, undefined],
      [{ bbox: 'x' }, undefined],
      [[1, 2], undefined],
      [{}, '/stac/v1/search?limit=1'],
    ] as const) {
      const refused = await post(body, path);
      const error = (await refused.json()) as Json;
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(error.code, 'INVALID_PARAMETER');
      assert.equal(typeof error.description, 'string');
    }
    const notJson = await fetch(new URL(`/stac/v1/search?apikey=${gis.key}`, gis.base), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"bbox": [',
    });
    assert.equal(notJson.status, 400);
    // The key is checked first; the landing page offers both; other STAC paths take GET only.
    const keyless = await fetch(new URL('/stac/v1/search', gis.base), { method: 'POST', body: '{}' });
    assert.equal(keyless.status, 401);
    const landing = await json('/stac/v1/');
    assert.deepEqual(
      (landing.links as Json[]).filter((link) => link.rel === 'search').map((link) => link.method),
      ['GET', 'POST'],
    );
    const preflight = await fetch(new URL('/stac/v1/search', gis.base), { method: 'OPTIONS' });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('allow'), 'GET, HEAD, POST, OPTIONS');
    const elsewhere = await post({}, '/stac/v1/collections');
    assert.equal(elsewhere.status, 405);
    assert.equal(elsewhere.headers.get('allow'), 'GET, HEAD');
    assert.equal(typeof ((await elsewhere.json()) as Json).description, 'string');
  });

  test('the OpenAPI document describes every GIS endpoint', async () => {
    const document = await json('/openapi.json', 200, 'none');
    const paths = Object.keys(document.paths);
    for (const path of [
      '/stac/v1/',
      '/stac/v1/conformance',
      '/stac/v1/collections',
      '/stac/v1/collections/{collectionId}',
      '/stac/v1/collections/{collectionId}/items',
      '/stac/v1/collections/{collectionId}/items/{itemId}',
      '/stac/v1/search',
      '/tiles/v3/{contentType}/tilejson.json',
      '/tiles/v3/surveys/{surveyId}/{contentType}/tilejson.json',
      '/wmts/1.0.0/WMTSCapabilities.xml',
      '/wmts/1.0.0/{layer}/default/{time}/GoogleMapsCompatible/{z}/{row}/{file}',
    ]) {
      assert.ok(paths.includes(path), `${path} is in /openapi.json`);
      assert.deepEqual(document.paths[path].get.tags, ['gis'], path);
    }
    const search = document.paths['/stac/v1/search'].get.parameters.map((p: Json) => p.name);
    for (const name of ['bbox', 'intersects', 'datetime', 'limit', 'offset']) assert.ok(search.includes(name), name);
  });

  test('the key sent in the header stays out of every link', async () => {
    const items = await json('/stac/v1/search', 200, 'header');
    checkHrefs(items, false);
    checkHrefs(await json('/stac/v1/', 200, 'header'), false);
    const response = await gis.get('/stac/v1/search');
    assert.equal(response.headers.get('cache-control'), 'no-store', 'a body holding the key is not cached');
  });

  test("bad input: the STAC API error shape and nadir's at once, 400, 401 and 404", async () => {
    const cases: [string, number, string, 'query' | 'none'][] = [
      ['/stac/v1/search?bbox=1,2,3', 400, 'bbox', 'query'],
      ['/stac/v1/search?bbox=10,5,11,4', 400, 'bbox', 'query'],
      ['/stac/v1/search?bbox=a,b,c,d', 400, 'bbox', 'query'],
      ['/stac/v1/search?datetime=yesterday', 400, 'datetime', 'query'],
      ['/stac/v1/search?datetime=2025-02-30T00:00:00Z', 400, 'datetime', 'query'],
      ['/stac/v1/search?datetime=2025-02-01T00:00:00Z/2025-01-01T00:00:00Z', 400, 'datetime', 'query'],
      ['/stac/v1/search?datetime=../..', 400, 'datetime', 'query'],
      ['/stac/v1/search?intersects={nope', 400, 'intersects', 'query'],
      ['/stac/v1/search?intersects={"type":"Circle","coordinates":[0,0]}', 400, 'intersects', 'query'],
      ['/stac/v1/search?bbox=0,0,1,1&intersects={"type":"Point","coordinates":[0,0]}', 400, 'intersects', 'query'],
      ['/stac/v1/search?limit=0', 400, 'limit', 'query'],
      ['/stac/v1/search?limit=1&limit=2', 400, 'limit', 'query'],
      ['/stac/v1/search?foo=bar', 400, 'foo', 'query'],
      ['/stac/v1/collections/surveys/items?sortby=-foo', 400, 'sortby', 'query'],
      ['/stac/v1/search?filter=nope', 400, 'filter', 'query'],
      ['/stac/v1/search?offset=10001', 400, 'offset', 'query'],
      ['/stac/v1/search?offset=1&token=next:WyIyMDI1LTAxLTAxIiwiIiwiIl0', 400, 'offset', 'query'],
      ['/stac/v1/search?token=later', 400, 'token', 'query'],
      ['/stac/v1/search?token=next:bm9wZQ', 400, 'token', 'query'],
      // A token whose id holds a NUL byte: refused before any engine sees it.
      [
        `/stac/v1/search?token=next:${Buffer.from('["2025-01-01","","a\\u0000b"]').toString('base64url')}`,
        400,
        'token',
        'query',
      ],
      [`/stac/v1/search?ids=${Array.from({ length: 1001 }, (_, i) => i).join(',')}`, 400, 'ids', 'query'],
      ['/stac/v1/collections/nope', 404, '', 'query'],
      ['/stac/v1/collections/nope/items', 404, '', 'query'],
      [`/stac/v1/collections/surveys/items/${'0'.repeat(8)}`, 404, '', 'query'],
      ['/stac/v1/nothing-here', 404, '', 'query'],
      ['/stac/v1/search', 401, '', 'none'],
    ];
    for (const [path, status, parameter, how] of cases) {
      const body = await json(path, status, how);
      valid('exception', body, path);
      assert.equal(typeof body.description, 'string', path);
      assert.equal(body.description, body.error, path);
      assert.equal(body.code, status === 400 ? 'INVALID_PARAMETER' : status === 401 ? 'API_KEY_INVALID' : 'NOT_FOUND');
      if (parameter) assert.equal(body.parameter, parameter, path);
    }
  });
});
