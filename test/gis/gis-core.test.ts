/** The pure parts of the GIS endpoints: geometry tests, STAC search parameters, extents. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TagExtent } from '../../src/catalogue/catalogue.js';
import { NadirError } from '../../src/errors.js';
import { type Geometry, geometryIntersectsMultiPolygon, geometryProblem } from '../../src/geo/geometry.js';
import type { MultiPolygon } from '../../src/geo/polygon.js';
import { linkTo } from '../../src/gis/gis-links.js';
import { extentOf, extentsByLayer } from '../../src/gis/layer-extent.js';
import { parseBbox, parseDatetime, parseStacSearch } from '../../src/gis/stac-search-parameters.js';
import { square } from './square.js';

/** A 10 x 10 square with a 2..8 hole. */
const FRAME: MultiPolygon = [[...square(0, 0, 10, 10), ...square(2, 2, 8, 8)]];

function refuses(parameter: string, run: () => unknown): void {
  assert.throws(run, (error: unknown) => error instanceof NadirError && error.details.parameter === parameter);
}

describe('geometry against a footprint', () => {
  const cases: [string, Geometry, boolean][] = [
    ['a point inside', { type: 'Point', coordinates: [1, 1] }, true],
    ['a point in the hole', { type: 'Point', coordinates: [5, 5] }, false],
    ['a point outside', { type: 'Point', coordinates: [11, 5] }, false],
    ['a point on the edge', { type: 'Point', coordinates: [10, 5] }, true],
    // A bar across the frame: no vertex of either inside the other, only crossing edges.
    ['a crossing bar', { type: 'Polygon', coordinates: square(-1, 0.5, 11, 1.5) }, true],
    ['a polygon in the hole', { type: 'Polygon', coordinates: square(3, 3, 7, 7) }, false],
    ['a polygon holding it all', { type: 'Polygon', coordinates: square(-5, -5, 15, 15) }, true],
    [
      'a line through',
      {
        type: 'LineString',
        coordinates: [
          [-1, 5],
          [11, 5],
        ],
      },
      true,
    ],
    [
      'a line in the hole',
      {
        type: 'LineString',
        coordinates: [
          [3, 5],
          [7, 5],
        ],
      },
      false,
    ],
    [
      'one of several polygons',
      { type: 'MultiPolygon', coordinates: [square(20, 20, 21, 21), square(9, 9, 12, 12)] },
      true,
    ],
  ];
  for (const [what, geometry, expected] of cases) {
    test(what, () => {
      assert.equal(geometryProblem(geometry), undefined);
      assert.equal(geometryIntersectsMultiPolygon(geometry, FRAME), expected);
    });
  }

  test('what is not a geometry', () => {
    for (const value of [
      null,
      [],
      { type: 'Circle' },
      { type: 'Point' },
      { type: 'Point', coordinates: [200, 0] },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 1],
          ],
        ],
      },
      { type: 'Point', coordinates: ['1', 2] },
    ]) {
      assert.ok(geometryProblem(value), JSON.stringify(value));
    }
  });
});

describe('STAC search parameters', () => {
  test('datetime: instants and intervals, normalised to UTC', () => {
    assert.deepEqual(parseDatetime('2025-01-01T01:00:00+02:00'), {
      start: '2024-12-31T23:00:00.000Z',
      end: '2024-12-31T23:00:00.000Z',
    });
    assert.deepEqual(parseDatetime('2025-01-01T00:00:00Z/..'), { start: '2025-01-01T00:00:00.000Z', end: undefined });
    assert.deepEqual(parseDatetime('/2025-01-01T00:00:00.5z'), { start: undefined, end: '2025-01-01T00:00:00.500Z' });
    assert.deepEqual(parseDatetime('2024-02-29T00:00:00Z').start, '2024-02-29T00:00:00.000Z');
    for (const bad of [
      '2025-02-29T00:00:00Z',
      '2025-01-01T24:00:00Z',
      '2025-01-01',
      '../..',
      '/',
      'a/b/c',
      '2025-01-02T00:00:00Z/2025-01-01T00:00:00Z',
      '2025-01-01T00:00:00',
    ]) {
      refuses('datetime', () => parseDatetime(bad));
    }
  });

  test('bbox: 4 or 6 numbers in range, ordered, not across the antimeridian', () => {
    assert.deepEqual(parseBbox('-1,-2,3,4'), { minX: -1, minY: -2, maxX: 3, maxY: 4 });
    assert.deepEqual(parseBbox('-1,-2,0,3,4,100'), { minX: -1, minY: -2, maxX: 3, maxY: 4 });
    for (const bad of [
      '1,2,3',
      '1,2,3,4,5',
      '170,0,-170,1',
      '0,5,1,4',
      '0,-91,1,0',
      '0,0,181,1',
      'a,0,1,1',
      '0x1,0,1,1',
      '',
    ]) {
      refuses('bbox', () => parseBbox(bad));
    }
  });

  test('limit is clamped to 1000; bbox and intersects are exclusive', () => {
    assert.equal(parseStacSearch({ limit: 5000 }).limit, 1000);
    assert.equal(parseStacSearch({}).limit, 10);
    refuses('intersects', () =>
      parseStacSearch({ bbox: '0,0,1,1', intersects: '{"type":"Point","coordinates":[0,0]}' }),
    );
  });
});

describe('links and extents', () => {
  test('a template keeps its braces; the key comes last, only when given', () => {
    assert.equal(
      linkTo({ base: 'http://h' }, '/t/{z}/{x}/{y}.img', { since: '12M', until: undefined }),
      'http://h/t/{z}/{x}/{y}.img?since=12M',
    );
    assert.equal(
      linkTo({ base: 'http://h', apikey: 'k&1' }, '/a', { include: 'disaster:fire' }),
      'http://h/a?include=disaster%3Afire&apikey=k%261',
    );
  });

  test('a layer spans its tags: the union of boxes, photo times, zooms and every date once, newest first', () => {
    const row = (tag: string, dates: string[], minX: number, minZoom: number) =>
      ({
        tag,
        surveys: dates.length,
        bounds: { minX, minY: 0, maxX: minX + 1, maxY: 1 },
        firstPhotoTime: `${dates.at(-1)}T09:00:00Z`,
        lastPhotoTime: `${dates[0]}T10:00:00Z`,
        minZoom,
        maxZoom: minZoom + 6,
        captureDates: dates,
      }) satisfies TagExtent;
    const rows = [
      row('', ['2025-02-01', '2024-01-01'], -2, 12),
      row('disaster', ['2024-01-01'], -2, 12),
      row('disaster:fire', ['2025-02-01'], 3, 14),
      row('disaster:flood', ['2024-03-01', '2024-01-01'], -2, 12),
    ];
    assert.deepEqual(extentOf(rows.slice(0, 1), true), {
      bounds: { minX: -2, minY: 0, maxX: -1, maxY: 1 },
      start: '2024-01-01T09:00:00Z',
      end: '2025-02-01T10:00:00Z',
      minZoom: 12,
      maxZoom: 18,
      captureDates: ['2025-02-01', '2024-01-01'],
    });
    const byLayer = extentsByLayer(rows);
    assert.deepEqual([...byLayer.keys()].sort(), ['disaster', 'disaster:fire', 'disaster:flood']);
    // The tag type's layer holds its typed tags' surveys and its own; a date once, newest first.
    const disaster = extentOf(byLayer.get('disaster') ?? [], true);
    assert.deepEqual(disaster.captureDates, ['2025-02-01', '2024-03-01', '2024-01-01']);
    assert.deepEqual(
      [disaster.bounds, disaster.minZoom, disaster.maxZoom],
      [{ minX: -2, minY: 0, maxX: 4, maxY: 1 }, 12, 20],
    );
    assert.equal(extentOf([], true).bounds, undefined);
    assert.equal(extentOf(rows, false).maxZoom, undefined, 'no zoom without a type');
  });
});
