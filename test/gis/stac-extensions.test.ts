/**
 * The STAC API as its clients use it (issue 34), over a real `nadir serve` on the demo town:
 * unknown parameters refused, the sort, fields and filter extensions, GeometryCollection and
 * antimeridian areas, the conformance classes and queryables, `proj:*` checked against gdalinfo
 * of the survey's files, and the web-map links followed to a tile.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CONFORMANCE_CLASSES } from '../../src/gis/stac.js';
import { QUERYABLES } from '../../src/gis/stac-order.js';
import { gdalinfo } from '../support/fixtures.js';
import { type GisServer, MID, NEW, OLD, startGisServer } from './demo-server.js';
import { type StacValidators, schemaErrors, stacValidators } from './stac-schemas.js';

// biome-ignore lint/suspicious/noExplicitAny: the documents under test are what is being checked
type Json = Record<string, any>;

describe('STAC API extensions over the demo town', () => {
  let gis: GisServer;
  let validate: StacValidators;

  before(async () => {
    validate = stacValidators();
    gis = await startGisServer();
  });
  after(async () => {
    await gis?.server.stop();
  });

  async function json(path: string, status = 200): Promise<Json> {
    const response = await gis.get(path);
    const body = (await response.json()) as Json;
    assert.equal(response.status, status, `${path}: ${JSON.stringify(body).slice(0, 400)}`);
    return body;
  }

  async function ids(query: string): Promise<string[]> {
    const page = await json(`/stac/v1/search?${query}`);
    const check = validate.itemCollection;
    if (!/fields=/.test(query)) assert.ok(check(page), `${query}: ${schemaErrors(check)}`);
    return (page.features as Json[]).map((item) => item.id);
  }

  async function refused(path: string, parameter: string): Promise<Json> {
    const body = await json(path, 400);
    assert.ok(validate.exception(body), `${path}: ${schemaErrors(validate.exception)}`);
    assert.deepEqual([body.code, body.parameter, body.description], ['INVALID_PARAMETER', parameter, body.error], path);
    return body;
  }

  const q = encodeURIComponent;

  function near(a: number[], b: number[], what: string): void {
    assert.ok(
      a.length === b.length && a.every((v, i) => Math.abs(v - (b[i] as number)) <= 1e-6 * Math.max(1, Math.abs(v))),
      `${what}: ${a} vs ${b}`,
    );
  }

  test('an unknown query parameter is a 400 on search and items; apikey and the declared ones are not', async () => {
    for (const path of ['/stac/v1/search', '/stac/v1/collections/surveys/items']) {
      const body = await refused(`${path}?foo=bar`, 'foo');
      assert.match(body.error, /Unknown parameter foo/);
      await refused(`${path}?query=${q('{"gsd":{"lt":1}}')}`, 'query');
      await refused(`${path}?limit=1&cachebust=1`, 'cachebust');
      await refused(`${path}?apiKey=x`, 'apiKey');
      await json(`${path}?limit=1`);
    }
    // The issue's example: a filter that matches nothing answered every item; now it answers none.
    assert.deepEqual(await ids(`filter=${q("id='nonexistent'")}&filter-lang=cql2-text`), []);
    // Other STAC documents keep ignoring extras, as every other route does (decisions.md).
    await json('/stac/v1/conformance?foo=bar');
  });

  test('an error of the STAC API has description, a 405 too', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const response = await fetch(new URL(`/stac/v1/search?apikey=${gis.key}`, gis.base), {
        method,
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      const body = (await response.json()) as Json;
      assert.equal(response.status, 405, method);
      assert.equal(body.code, 'METHOD_NOT_ALLOWED');
      assert.equal(body.description, body.error, `${method}: ${JSON.stringify(body)}`);
      assert.ok(validate.exception(body));
    }
  });

  test('conformance says the extensions, the landing page the same, and links the queryables', async () => {
    const conformance = await json('/stac/v1/conformance');
    const landing = await json('/stac/v1/');
    for (const document of [conformance.conformsTo, landing.conformsTo]) {
      assert.deepEqual(document, CONFORMANCE_CLASSES);
      for (const uri of [
        'https://api.stacspec.org/v1.0.0/item-search#sort',
        'https://api.stacspec.org/v1.0.0/item-search#fields',
        'https://api.stacspec.org/v1.0.0/item-search#filter',
        'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
        'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
        'http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2',
        'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions',
        'http://www.opengis.net/spec/cql2/1.0/conf/array-functions',
      ]) {
        assert.ok(document.includes(uri), uri);
      }
      // Not honoured in full: not claimed.
      for (const uri of [
        'http://www.opengis.net/spec/cql2/1.0/conf/temporal-functions',
        'https://api.stacspec.org/v1.0.0/item-search#query',
        'https://api.stacspec.org/v1.0.0/item-search#context',
      ]) {
        assert.ok(!document.includes(uri), uri);
      }
    }
    const link = (landing.links as Json[]).find((l) => l.rel === 'http://www.opengis.net/def/rel/ogc/1.0/queryables');
    assert.equal(new URL(link?.href).pathname, '/stac/v1/queryables');
    const response = await fetch(new URL('/stac/v1/queryables', gis.base));
    assert.equal(response.status, 200, 'the queryables need no key');
    assert.match(response.headers.get('content-type') ?? '', /^application\/schema\+json/);
    const queryables = (await response.json()) as Json;
    assert.deepEqual(Object.keys(queryables.properties), Object.keys(QUERYABLES));
    // Every queryable can be named in a filter.
    for (const name of Object.keys(QUERYABLES)) {
      assert.equal((await ids(`filter=${q(`"${name}" IS NULL`)}`)).length >= 0, true, name);
    }
  });

  test('sortby: the catalogue order, its reverse, and sorts made over the matches, paged by their links', async () => {
    assert.deepEqual(await ids('sortby=-datetime'), [NEW, MID, OLD]);
    assert.deepEqual(await ids(`sortby=${q('+datetime')}`), [OLD, MID, NEW]);
    assert.deepEqual(await ids('sortby=datetime'), [OLD, MID, NEW]);
    assert.deepEqual(await ids(`sortby=${q('+nadir:capture_date')}`), [OLD, MID, NEW]);
    assert.deepEqual(await ids('sortby=-id'), [NEW, MID, OLD].sort().reverse());
    assert.deepEqual(await ids('sortby=id'), [NEW, MID, OLD].sort());
    for (const start of ['sortby=id&limit=1', `sortby=${q('+nadir:capture_date')}&limit=1`]) {
      const seen: string[] = [];
      let url: string | undefined = new URL(`/stac/v1/search?${start}&apikey=${gis.key}`, gis.base).href;
      for (let pages = 0; url; pages++) {
        assert.ok(pages < 4, 'paging ends');
        const page = (await (await fetch(url)).json()) as Json;
        seen.push(...page.features.map((f: Json) => f.id));
        url = (page.links as Json[]).find((l) => l.rel === 'next')?.href;
      }
      assert.deepEqual(seen, start.startsWith('sortby=id') ? [NEW, MID, OLD].sort() : [OLD, MID, NEW], start);
    }
    await refused('/stac/v1/search?sortby=cloud_cover', 'sortby');
  });

  test('fields: include and exclude', async () => {
    const page = await json(`/stac/v1/search?fields=${q('id,properties.nadir:tags,-links,-assets,-geometry')}`);
    const item = page.features[0] as Json;
    assert.equal(item.id, NEW);
    assert.deepEqual(Object.keys(item.properties).sort(), ['datetime', 'nadir:tags']);
    assert.equal(item.assets, undefined);
    assert.equal(item.links, undefined);
    assert.equal(item.geometry, undefined);
    assert.ok(Array.isArray(item.bbox));
    const lean = await json(`/stac/v1/collections/surveys/items?fields=${q('-assets')}`);
    assert.equal(lean.features.length, 3);
    assert.ok(lean.features.every((f: Json) => f.assets === undefined && f.properties['nadir:capture_date']));
    const next = new URL(
      (await json('/stac/v1/search?limit=1&fields=id')).links.find((l: Json) => l.rel === 'next').href,
    );
    assert.equal(next.searchParams.get('fields'), 'id', 'the next page asks the same');
    await refused(`/stac/v1/search?fields=${q('a..b')}`, 'fields');
  });

  test('filter: CQL2 text and JSON, none, and/or/not, S_INTERSECTS, T_INTERSECTS, tags, content types', async () => {
    const town = await json(`/stac/v1/collections/surveys/items/${NEW}`);
    const [lon, lat] = [(town.bbox[0] + town.bbox[2]) / 2, (town.bbox[1] + town.bbox[3]) / 2];
    const text = async (filter: string) => ids(`filter=${q(filter)}`);
    assert.deepEqual(await text("id = 'nonexistent'"), []);
    assert.deepEqual(await text(`id = '${MID}' OR id = '${OLD}'`), [MID, OLD]);
    assert.deepEqual(await text(`NOT id = '${MID}' AND datetime >= TIMESTAMP('2025-01-01T00:00:00Z')`), [NEW]);
    assert.deepEqual(await text(`A_CONTAINS("nadir:tags", ('disaster:hurricane'))`), [NEW]);
    assert.deepEqual(await text(`A_CONTAINS("nadir:content_types", ('Vert', 'TrueOrtho'))`), [NEW, MID, OLD]);
    assert.deepEqual(await text(`A_CONTAINS("nadir:content_types", ('Nope'))`), []);
    assert.deepEqual(await text("T_INTERSECTS(datetime, INTERVAL('..', '2024-12-31T23:59:59Z'))"), [OLD]);
    assert.deepEqual(await text(`"nadir:capture_date" = DATE('2025-10-20')`), [NEW]);
    assert.ok((await text(`S_INTERSECTS(geometry, POINT(${lon} ${lat}))`)).includes(NEW));
    assert.deepEqual(await text('S_INTERSECTS(geometry, BBOX(10, 10, 11, 11))'), []);
    const json1 = { op: '=', args: [{ property: 'id' }, MID] };
    assert.deepEqual(await ids(`filter-lang=cql2-json&filter=${q(JSON.stringify(json1))}`), [MID]);
    const json2 = {
      op: 'and',
      args: [
        { op: 's_intersects', args: [{ property: 'geometry' }, { type: 'Point', coordinates: [lon, lat] }] },
        { op: 't_intersects', args: [{ property: 'datetime' }, { interval: ['2025-10-20', '..'] }] },
      ],
    };
    assert.deepEqual(await ids(`filter-lang=cql2-json&filter=${q(JSON.stringify(json2))}`), [NEW]);
    // On the items endpoint too, and repeated by the next link.
    const first = await json(`/stac/v1/collections/surveys/items?limit=1&filter=${q(`id <> '${NEW}'`)}`);
    assert.deepEqual(
      first.features.map((f: Json) => f.id),
      [MID],
    );
    const next = (await (await fetch(first.links.find((l: Json) => l.rel === 'next').href)).json()) as Json;
    assert.deepEqual(
      next.features.map((f: Json) => f.id),
      [OLD],
    );
    await refused(`/stac/v1/search?filter=${q('cloud_cover < 10')}`, 'filter');
    await refused(`/stac/v1/search?filter=${q("id = 'a")}`, 'filter');
    await refused('/stac/v1/search?filter-lang=cql2-json', 'filter-lang');
    await refused(`/stac/v1/search?filter=TRUE&filter-lang=sql`, 'filter-lang');
    await refused(`/stac/v1/search?filter=TRUE&filter-crs=${q('EPSG:4326')}`, 'filter-crs');
  });

  test('intersects takes a GeometryCollection; a bbox across the antimeridian is its two halves', async () => {
    const town = await json(`/stac/v1/collections/surveys/items/${NEW}`);
    const [lon, lat] = [(town.bbox[0] + town.bbox[2]) / 2, (town.bbox[1] + town.bbox[3]) / 2];
    const collection = (points: [number, number][]) =>
      q(
        JSON.stringify({
          type: 'GeometryCollection',
          geometries: points.map((coordinates) => ({ type: 'Point', coordinates })),
        }),
      );
    assert.ok(
      (
        await ids(
          `intersects=${collection([
            [0, 0],
            [lon, lat],
          ])}`,
        )
      ).includes(NEW),
    );
    assert.deepEqual(
      await ids(
        `intersects=${collection([
          [0, 0],
          [1, 1],
        ])}`,
      ),
      [],
    );
    await refused(`/stac/v1/search?intersects=${q('{"type":"GeometryCollection","geometries":[]}')}`, 'intersects');
    // The town is at -85.4: east of -85.5, so in the western half of 179.9..-170 it is not, but of -85.5..-170 it is.
    assert.deepEqual(await ids('bbox=-85.5,29,-170,31'), [NEW, MID, OLD]);
    assert.deepEqual(await ids('bbox=170,29,-170,31'), []);
    assert.deepEqual(await ids('bbox=-85.3,29,-85.5,31'), [], 'both halves miss the town');
  });

  test('proj:* of every asset is the grid of its file (gdalinfo), EPSG:3857', async () => {
    const item = await json(`/stac/v1/collections/surveys/items/${OLD}`);
    assert.ok(item.stac_extensions.includes('https://stac-extensions.github.io/projection/v2.0.0/schema.json'));
    assert.equal(item.properties['proj:code'], 'EPSG:3857');
    const version = item.properties['nadir:version'] as number;
    let compared = 0;
    for (const [key, asset] of Object.entries(item.assets as Record<string, Json>)) {
      const type = key.replace(/_tiles$/, '');
      const file = join(gis.town.dataDir, 'surveys', OLD, `v${version}`, `${type}.tif`);
      if (!existsSync(file)) continue;
      const info = await gdalinfo(file);
      const [x0, xres, , y0, , yres] = info.geoTransform;
      const [width, height] = info.size;
      assert.match(info.coordinateSystem?.wkt ?? '', /Pseudo-Mercator|3857/, file);
      assert.equal(asset['proj:code'], 'EPSG:3857', key);
      assert.deepEqual(asset['proj:shape'], [height, width], key);
      near(asset['proj:transform'], [xres, 0, x0, 0, yres, y0], key);
      near(asset['proj:bbox'], [x0, y0 + height * yres, x0 + width * xres, y0], key);
      compared++;
    }
    assert.ok(compared >= 8, `compared ${compared} assets with their files`);
    // A survey stored as shards: its grid spans them at the native zoom.
    const sharded = await json(`/stac/v1/collections/surveys/items/${MID}`);
    for (const asset of Object.values(sharded.assets as Record<string, Json>)) {
      const [w, , x0, , h, y0] = asset['proj:transform'];
      const [rows, cols] = asset['proj:shape'];
      near(asset['proj:bbox'], [x0, y0 + rows * h, x0 + cols * w, y0], 'sharded');
    }
  });

  test('the web-map links of an item resolve: xyz to a tile image, tilejson, wmts', async () => {
    const item = await json(`/stac/v1/collections/surveys/items/${NEW}`);
    assert.ok(item.stac_extensions.includes('https://stac-extensions.github.io/web-map-links/v1.2.0/schema.json'));
    const link = (rel: string) => (item.links as Json[]).find((l) => l.rel === rel) as Json;
    const xyz = link('xyz').href as string;
    assert.match(xyz, /\{z\}\/\{x\}\/\{y\}/);
    const tileJson = (await (await fetch(link('tilejson').href)).json()) as Json;
    assert.deepEqual(tileJson.tiles, [xyz], 'the TileJSON draws the same template');
    const [lon, lat] = tileJson.center as [number, number];
    const z = tileJson.maxzoom as number;
    const n = 2 ** z;
    const x = Math.floor(((lon + 180) / 360) * n);
    const y = Math.floor(((1 - Math.asinh(Math.tan((lat * Math.PI) / 180)) / Math.PI) / 2) * n);
    const tile = await fetch(xyz.replace('{z}', `${z}`).replace('{x}', `${x}`).replace('{y}', `${y}`));
    assert.equal(tile.status, 200);
    assert.match(tile.headers.get('content-type') ?? '', /^image\/(jpeg|png)$/);
    assert.equal(tile.headers.get('x-survey-ids'), NEW);
    assert.ok((await tile.arrayBuffer()).byteLength > 100);
    const wmts = link('wmts');
    assert.equal(wmts['wmts:layer'], 'Vert');
    assert.deepEqual(wmts['wmts:dimensions'], { Time: item.properties['nadir:capture_date'] });
    const capabilities = await fetch(wmts.href);
    assert.equal(capabilities.status, 200);
    const xml = await capabilities.text();
    assert.match(xml, /<ows:Identifier>Vert<\/ows:Identifier>/);
    assert.ok(xml.includes(`<Value>${item.properties['nadir:capture_date']}</Value>`), 'the Time value is listed');
  });
});
