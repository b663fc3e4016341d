/**
 * The STAC search core without a server: the extensions' parameters (sortby, fields, filter), a
 * POST body read as the same search as GET's parameters, GeometryCollection and antimeridian
 * areas, unknown parameters, and searches over a catalogue in memory (walked as the engines walk).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  compareInOrder,
  type SurveyCatalogue,
  type SurveyOrderKey,
  type SurveyWalk,
} from '../../src/catalogue/catalogue.js';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import { isAfter, orderKeyOf, walkSurveys } from '../../src/catalogue/survey-walk.js';
import { NadirError } from '../../src/errors.js';
import { multiPolygonBounds } from '../../src/geo/polygon.js';
import { itemCollection } from '../../src/gis/stac.js';
import { applyFields } from '../../src/gis/stac-fields.js';
import { catalogueOrder } from '../../src/gis/stac-order.js';
import { MAX_EXAMINED, type StacSearch, searchSurveys } from '../../src/gis/stac-search.js';
import {
  parseFields,
  parseSortby,
  parseStacSearch,
  parseStacSearchBody,
  refuseUndeclared,
} from '../../src/gis/stac-search-parameters.js';
import { square } from './square.js';

function refuses(parameter: string, run: () => unknown, pattern?: RegExp): void {
  assert.throws(
    run,
    (error: unknown) =>
      error instanceof NadirError &&
      error.code === 'INVALID_PARAMETER' &&
      error.details.parameter === parameter &&
      (!pattern || pattern.test(error.message)),
  );
}

function survey(id: string, date: string, hour: number, x0: number, tags: string[] = [], gsd = 0.1): Survey {
  const asset = {
    gsd,
    maxZoom: 20,
    minZoom: 12,
    bounds: { minX: 0, minY: 0, maxX: 100, maxY: 100 },
    width: 10,
    height: 10,
  } as Asset;
  return {
    id,
    captureDate: date,
    firstPhotoTime: `${date}T${String(hour).padStart(2, '0')}:00:00Z`,
    lastPhotoTime: `${date}T${String(hour + 1).padStart(2, '0')}:00:00Z`,
    tags,
    footprint: [square(x0, 0, x0 + 1, 1)],
    version: 1,
    assets: { Vert: asset },
    ingestedAt: '2025-01-01T00:00:00Z',
  };
}

/** A catalogue in memory: candidates are the surveys whose box meets the area, walked in batches. */
function memoryCatalogue(surveys: Survey[]): Pick<SurveyCatalogue, 'walk' | 'get' | 'count'> {
  return {
    async get(id) {
      return surveys.find((s) => s.id === id);
    },
    async count() {
      return surveys.length;
    },
    async walk(query: SurveyWalk) {
      const order = query.order ?? 'newest';
      const candidates = surveys
        .filter((s) => {
          const box = multiPolygonBounds(s.footprint);
          const { area } = query;
          return box.minX <= area.maxX && box.maxX >= area.minX && box.minY <= area.maxY && box.maxY >= area.minY;
        })
        .sort((a, b) => compareInOrder(a, b, order));
      return walkSurveys(query, async (after, rows) => {
        const rest = candidates.filter((s) => isAfter(s, after, order));
        const batch = rest.slice(0, rows);
        const last = batch.at(-1);
        return { surveys: batch, last: last && orderKeyOf(last), rows: batch.length, exhausted: rest.length <= rows };
      });
    },
  };
}

const TOWN = [
  survey('s1', '2024-03-14', 10, 0, [], 0.2),
  survey('s2', '2025-04-02', 9, 10, ['disaster'], 0.05),
  survey('s3', '2025-10-20', 14, 20, ['disaster:hurricane'], 0.1),
  // Across the antimeridian's two sides.
  survey('w', '2023-01-01', 12, 179, [], 0.3),
  survey('e', '2023-01-02', 12, -180, [], 0.3),
];
const catalogue = memoryCatalogue(TOWN);

async function ids(search: StacSearch): Promise<string[]> {
  return (await searchSurveys(catalogue, search)).surveys.map((s) => s.id);
}

describe('parameters of the extensions', () => {
  test('sortby: GET text (+ as a space too) and POST objects; unknown fields refused', () => {
    assert.deepEqual(parseSortby('-datetime,+id'), [
      { field: 'datetime', direction: 'desc' },
      { field: 'id', direction: 'asc' },
    ]);
    assert.deepEqual(parseSortby(' id'), [{ field: 'id', direction: 'asc' }], '+ decoded as a space');
    assert.deepEqual(parseSortby([{ field: 'properties.datetime', direction: 'desc' }]), [
      { field: 'datetime', direction: 'desc' },
    ]);
    refuses('sortby', () => parseSortby('cloud_cover'), /cannot sort by "cloud_cover"/);
    refuses('sortby', () => parseSortby('id,-id'), /twice/);
    refuses('sortby', () => parseSortby([{ field: 'id', direction: 'up' }]));
  });

  test("the catalogue's order and its reverse are walked; other sorts are not", () => {
    assert.equal(catalogueOrder(undefined), 'newest');
    assert.equal(catalogueOrder(parseSortby('-nadir:capture_date')), 'newest');
    assert.equal(catalogueOrder(parseSortby('-nadir:capture_date,-end_datetime,+id')), 'newest');
    assert.equal(catalogueOrder(parseSortby('+nadir:capture_date,+end_datetime')), 'oldest');
    assert.equal(catalogueOrder(parseSortby('-datetime')), undefined);
    assert.equal(catalogueOrder(parseSortby('-nadir:capture_date,-id')), undefined);
  });

  test('fields: include, exclude, the default set, the more specific path deciding', () => {
    const item = {
      type: 'Feature',
      stac_version: '1.0.0',
      stac_extensions: [],
      id: 'x',
      collection: 'surveys',
      geometry: { type: 'Point' },
      bbox: [0, 0, 1, 1],
      properties: { datetime: 'd', gsd: 1, 'nadir:tags': ['t'] },
      links: [],
      assets: { Vert: { href: 'h', gsd: 1 } },
    };
    assert.deepEqual(Object.keys(applyFields(item, parseFields('-geometry,-assets'))), [
      'type',
      'stac_version',
      'stac_extensions',
      'id',
      'collection',
      'bbox',
      'properties',
      'links',
    ]);
    const some = applyFields(item, parseFields('properties.nadir:tags,-links,-geometry'));
    assert.deepEqual(some.properties, { datetime: 'd', 'nadir:tags': ['t'] }, 'the default datetime and the one asked');
    assert.equal(some.links, undefined);
    assert.equal(some.geometry, undefined, 'an exclusion beats the default set');
    assert.deepEqual(some.assets, item.assets);
    const only = applyFields(item, parseFields('-properties,properties.gsd'));
    assert.deepEqual(only.properties, { datetime: 'd', gsd: 1 }, 'the more specific inclusions (and defaults) win');
    assert.deepEqual(applyFields(item, parseFields('id,-assets.Vert.gsd')).assets, { Vert: { href: 'h' } });
    assert.deepEqual(parseFields({ include: ['id'], exclude: ['geometry'] }), parseFields('id,-geometry'));
    refuses('fields', () => parseFields('a..b'));
    refuses('fields', () => parseFields({ include: 'id' }));
  });

  test('unknown parameters are refused, names as sent (case-sensitive); a nameless pair is none', () => {
    const declared = ['apikey', 'bbox'];
    refuseUndeclared({ apikey: 'k', bbox: '0,0,1,1', '': 'x' }, declared);
    refuses('foo', () => refuseUndeclared({ foo: 'bar' }, declared), /Unknown parameter foo/);
    refuses('apiKey', () => refuseUndeclared({ apiKey: 'k' }, declared));
    refuses('a parameter', () => refuseUndeclared({ '<script>': '1' }, declared));
  });
});

describe('areas', () => {
  test('a GeometryCollection meets a footprint when one of its members does', async () => {
    const collection = JSON.stringify({
      type: 'GeometryCollection',
      geometries: [
        { type: 'Point', coordinates: [0.5, 0.5] },
        { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [20.5, 0.5] }] },
      ],
    });
    assert.deepEqual(await ids(parseStacSearch({ intersects: collection })), ['s3', 's1']);
    refuses('intersects', () => parseStacSearch({ intersects: '{"type":"GeometryCollection","geometries":[]}' }));
    refuses('intersects', () =>
      parseStacSearch({ intersects: '{"type":"GeometryCollection","geometries":[{"type":"Point"}]}' }),
    );
  });

  test('a bbox with minLon > maxLon crosses the antimeridian: both of its halves', async () => {
    assert.deepEqual(await ids(parseStacSearch({ bbox: '178,-1,-178,2' })), ['e', 'w']);
    assert.deepEqual(await ids(parseStacSearch({ bbox: '178,-1,-179.5,2' })), ['e', 'w']);
    assert.deepEqual(await ids(parseStacSearch({ bbox: '179.9,5,-179.9,6' })), []);
    assert.deepEqual(await ids(parseStacSearch({ bbox: '-1,-1,2,2' })), ['s1'], 'an ordinary box is one box');
  });
});

describe('POST bodies and GET parameters', () => {
  test('the same search either way', async () => {
    const pairs: [Record<string, string | number>, Record<string, unknown>][] = [
      [
        { bbox: '-1,-1,30,2', limit: 2 },
        { bbox: [-1, -1, 30, 2], limit: 2 },
      ],
      [{ bbox: '178,-1,-178,2' }, { bbox: [178, -1, -178, 2] }],
      [
        { ids: 's1,s3', sortby: '-datetime' },
        { ids: ['s1', 's3'], sortby: [{ field: 'datetime', direction: 'desc' }] },
      ],
      [
        { datetime: '2025-01-01T00:00:00Z/..', fields: 'id' },
        { datetime: '2025-01-01T00:00:00Z/..', fields: { include: ['id'] } },
      ],
      [
        { filter: 'A_CONTAINS("nadir:tags", (\'disaster\'))' },
        { filter: { op: 'a_contains', args: [{ property: 'nadir:tags' }, ['disaster']] } },
      ],
      [
        { filter: "id = 's2'", 'filter-lang': 'cql2-text' },
        { filter: "id = 's2'", 'filter-lang': 'cql2-text' },
      ],
      [
        { intersects: JSON.stringify({ type: 'Point', coordinates: [10.5, 0.5] }) },
        { intersects: { type: 'Point', coordinates: [10.5, 0.5] } },
      ],
      [{ collections: 'elsewhere' }, { collections: ['elsewhere'] }],
    ];
    for (const [query, body] of pairs) {
      const get = parseStacSearch(query as never);
      const post = parseStacSearchBody(body);
      const [a, b] = [await searchSurveys(catalogue, get), await searchSurveys(catalogue, post)];
      assert.deepEqual(
        b.surveys.map((s) => s.id),
        a.surveys.map((s) => s.id),
        JSON.stringify(body),
      );
      assert.deepEqual([b.matched, b.next, b.nextOffset], [a.matched, a.next, a.nextOffset], JSON.stringify(body));
      assert.deepEqual(
        [post.limit, post.offset, post.fields, post.sortby],
        [get.limit, get.offset, get.fields, get.sortby],
      );
    }
    assert.deepEqual(parseStacSearchBody({ next: 'next:WyIyMDI1LTAxLTAxIiwiIiwiIl0' }).token?.direction, 'next');
  });

  test('a body member not in the search, or of the wrong type, is a 400', () => {
    refuses('foo', () => parseStacSearchBody({ foo: 1 }));
    refuses('bbox', () => parseStacSearchBody({ bbox: '0,0,1,1' }));
    refuses('ids', () => parseStacSearchBody({ ids: 's1' }));
    refuses('limit', () => parseStacSearchBody({ limit: 0 }));
    refuses('body', () => parseStacSearchBody([]));
    refuses('filter-lang', () => parseStacSearchBody({ filter: true, 'filter-lang': 'sql' }));
  });
});

describe('searches with the extensions', () => {
  test('sortby orders the items; ties and paging are stable', async () => {
    assert.deepEqual(await ids(parseStacSearch({ sortby: '-datetime' })), ['s3', 's2', 's1', 'e', 'w']);
    assert.deepEqual(await ids(parseStacSearch({ sortby: 'gsd,id' })), ['s2', 's3', 's1', 'e', 'w']);
    assert.deepEqual(await ids(parseStacSearch({ sortby: '-id' })), ['w', 's3', 's2', 's1', 'e']);
    assert.deepEqual(await ids(parseStacSearch({ sortby: '+nadir:capture_date' })), ['w', 'e', 's1', 's2', 's3']);
    // A sort made here pages by offset.
    const first = await searchSurveys(catalogue, parseStacSearch({ sortby: '-id', limit: 2 }));
    assert.deepEqual([first.nextOffset, first.prevOffset, first.matched], [2, undefined, 5]);
    const second = await searchSurveys(catalogue, parseStacSearch({ sortby: '-id', limit: 2, offset: 2 }));
    assert.deepEqual(
      second.surveys.map((s) => s.id),
      ['s2', 's1'],
    );
    assert.deepEqual([second.nextOffset, second.prevOffset], [4, 0]);
    // The catalogue's reverse order pages by token, backwards too.
    const oldest = await searchSurveys(catalogue, parseStacSearch({ sortby: '+nadir:capture_date', limit: 2 }));
    assert.ok(oldest.next);
    const place = oldest.next as SurveyOrderKey;
    await assert.rejects(
      searchSurveys(catalogue, { ...parseStacSearch({ sortby: 'id' }), token: { direction: 'next', place } }),
      (error: unknown) => error instanceof NadirError && error.details.parameter === 'token',
    );
  });

  test('a sort made here over more than MAX_EXAMINED candidates is a 400; the catalogue order is not', async () => {
    const many = Array.from({ length: MAX_EXAMINED + 1 }, (_, i) =>
      survey(`m${String(i).padStart(5, '0')}`, '2024-01-01', 1, 0),
    );
    const big = memoryCatalogue(many);
    await assert.rejects(searchSurveys(big, parseStacSearch({ sortby: 'id' })), /at most 2000 candidates/);
    assert.equal(
      (await searchSurveys(big, parseStacSearch({ sortby: '-nadir:capture_date', limit: 3 }))).surveys.length,
      3,
    );
    assert.equal(
      (await searchSurveys(big, parseStacSearch({ sortby: 'id', ids: 'm00001,m00000' }))).surveys[0]?.id,
      'm00000',
    );
  });

  test('filter: none, some, and/or/not, S_INTERSECTS, T_INTERSECTS, tags, content types', async () => {
    const filter = async (text: string) => ids(parseStacSearch({ filter: text }));
    assert.deepEqual(await filter("id = 'nonexistent'"), []);
    assert.deepEqual(await filter("id = 's2' OR id = 's1'"), ['s2', 's1']);
    assert.deepEqual(await filter("NOT id = 's2' AND gsd < 0.25"), ['s3', 's1']);
    assert.deepEqual(await filter('S_INTERSECTS(geometry, POINT(20.5 0.5))'), ['s3']);
    assert.deepEqual(await filter("T_INTERSECTS(datetime, INTERVAL('2025-04-02T09:30:00Z', '2025-04-02T09:45:00Z'))"), [
      's2',
    ]);
    assert.deepEqual(await filter("A_OVERLAPS(\"nadir:tags\", ('disaster', 'disaster:hurricane'))"), ['s3', 's2']);
    assert.deepEqual(await filter('A_CONTAINS("nadir:content_types", (\'Vert\'))'), ['s3', 's2', 's1', 'e', 'w']);
    assert.deepEqual(await filter('A_CONTAINS("nadir:content_types", (\'TrueOrtho\'))'), []);
    // A filter counts as an exact test: a full page of candidates examined is all one page examines.
    const page = await searchSurveys(catalogue, parseStacSearch({ filter: "id = 's1'", limit: 1 }));
    assert.deepEqual(page.matched, 1);
  });

  test('an item collection of a sort made here links its pages by offset, with the search repeated', () => {
    const page = itemCollection(
      { base: 'http://h' },
      {
        surveys: TOWN.slice(0, 2),
        limit: 2,
        nextOffset: 4,
        prevOffset: 0,
        path: '/stac/v1/search',
        query: { sortby: '-id', filter: "id <> 'x'" },
        self: { offset: 2 },
        fields: parseFields('id,-assets'),
      },
    );
    const links = page.links as { rel: string; href: string }[];
    const next = new URL(links.find((l) => l.rel === 'next')?.href ?? '');
    assert.deepEqual(
      [next.searchParams.get('offset'), next.searchParams.get('sortby'), next.searchParams.get('filter')],
      ['4', '-id', "id <> 'x'"],
    );
    assert.equal(new URL(links.find((l) => l.rel === 'prev')?.href ?? '').searchParams.get('offset'), '0');
    const features = page.features as Record<string, unknown>[];
    assert.equal(features[0]?.assets, undefined);
    assert.equal(features[0]?.id, 's1');
  });
});
