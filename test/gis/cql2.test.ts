/** CQL2 (src/gis/cql2.ts): the text encoding read as the JSON one, and filters tested on items. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NadirError } from '../../src/errors.js';
import { type Cql2Item, compileCql2, cql2TextToJson, type Queryable } from '../../src/gis/cql2.js';
import { square } from './square.js';

const QUERYABLES: Record<string, Queryable> = {
  id: { kind: 'string', description: '' },
  gsd: { kind: 'number', description: '' },
  datetime: { kind: 'instant', spans: true, description: '' },
  end_datetime: { kind: 'instant', description: '' },
  'nadir:capture_date': { kind: 'date', description: '' },
  'nadir:tags': { kind: 'strings', description: '' },
  'nadir:timezone': { kind: 'string', description: '' },
  geometry: { kind: 'geometry', description: '' },
};

function item(id: string, first: string, last: string, tags: string[], x0: number, gsd = 0.1): Cql2Item {
  return {
    values: {
      id,
      gsd,
      datetime: Date.parse(first),
      end_datetime: Date.parse(last),
      'nadir:capture_date': first.slice(0, 10),
      'nadir:tags': tags,
      'nadir:timezone': undefined,
    },
    geometry: [square(x0, 0, x0 + 1, 1)],
    span: [Date.parse(first), Date.parse(last)],
  };
}

const ITEMS = [
  item('a', '2024-03-14T10:00:00Z', '2024-03-14T12:00:00Z', [], 0, 0.2),
  item('b', '2025-04-02T10:00:00Z', '2025-04-02T11:00:00Z', ['disaster'], 10, 0.1),
  item('c', '2025-10-20T14:00:00Z', '2025-10-20T16:00:00Z', ['disaster:hurricane'], 20, 0.05),
];

function ids(filter: unknown, language: 'cql2-text' | 'cql2-json' = 'cql2-text'): string[] {
  const test = compileCql2(filter, language, QUERYABLES);
  return ITEMS.filter(test).map((i) => i.values.id as string);
}

function refuses(filter: unknown, pattern: RegExp, language: 'cql2-text' | 'cql2-json' = 'cql2-text'): void {
  assert.throws(
    () => compileCql2(filter, language, QUERYABLES),
    (error: unknown) =>
      error instanceof NadirError &&
      error.code === 'INVALID_PARAMETER' &&
      error.details.parameter === 'filter' &&
      pattern.test(error.message),
    String(JSON.stringify(filter)),
  );
}

describe('CQL2 text reads as CQL2 JSON', () => {
  test('comparisons, and/or/not with their precedence, parentheses', () => {
    assert.deepEqual(cql2TextToJson("id = 'a'"), { op: '=', args: [{ property: 'id' }, 'a'] });
    assert.deepEqual(cql2TextToJson("id <> 'it''s' OR NOT gsd >= 0.5 AND gsd < 1"), {
      op: 'or',
      args: [
        { op: '<>', args: [{ property: 'id' }, "it's"] },
        {
          op: 'and',
          args: [
            { op: 'not', args: [{ op: '>=', args: [{ property: 'gsd' }, 0.5] }] },
            { op: '<', args: [{ property: 'gsd' }, 1] },
          ],
        },
      ],
    });
    assert.deepEqual(cql2TextToJson('(TRUE)'), true);
    assert.deepEqual(cql2TextToJson('"nadir:tags" IS NOT NULL'), {
      op: 'not',
      args: [{ op: 'isNull', args: [{ property: 'nadir:tags' }] }],
    });
  });

  test('spatial, temporal and array functions with their literals', () => {
    assert.deepEqual(cql2TextToJson('S_INTERSECTS(geometry, POINT(1 2))'), {
      op: 's_intersects',
      args: [{ property: 'geometry' }, { type: 'Point', coordinates: [1, 2] }],
    });
    assert.deepEqual(cql2TextToJson('s_intersects(geometry, BBOX(-1, -2, 3, 4))'), {
      op: 's_intersects',
      args: [{ property: 'geometry' }, { bbox: [-1, -2, 3, 4] }],
    });
    assert.deepEqual(
      cql2TextToJson('S_INTERSECTS(geometry, GEOMETRYCOLLECTION(POINT(0 0), POLYGON((0 0, 1 0, 1 1, 0 0))))'),
      {
        op: 's_intersects',
        args: [
          { property: 'geometry' },
          {
            type: 'GeometryCollection',
            geometries: [
              { type: 'Point', coordinates: [0, 0] },
              {
                type: 'Polygon',
                coordinates: [
                  [
                    [0, 0],
                    [1, 0],
                    [1, 1],
                    [0, 0],
                  ],
                ],
              },
            ],
          },
        ],
      },
    );
    assert.deepEqual(cql2TextToJson("T_INTERSECTS(datetime, INTERVAL('2025-01-01', '..'))"), {
      op: 't_intersects',
      args: [{ property: 'datetime' }, { interval: ['2025-01-01', '..'] }],
    });
    assert.deepEqual(cql2TextToJson("A_CONTAINS(\"nadir:tags\", ('a', 'b'))"), {
      op: 'a_contains',
      args: [{ property: 'nadir:tags' }, ['a', 'b']],
    });
    assert.deepEqual(cql2TextToJson("id NOT IN ('a', 'b')"), {
      op: 'not',
      args: [{ op: 'in', args: [{ property: 'id' }, ['a', 'b']] }],
    });
    assert.deepEqual(cql2TextToJson('gsd BETWEEN 0.1 AND 0.2'), {
      op: 'between',
      args: [{ property: 'gsd' }, 0.1, 0.2],
    });
  });

  test('malformed text is a 400 naming filter and where', () => {
    for (const [text, pattern] of [
      ["id = 'a", /not closed/],
      ['id = ', /expected a value at the end/],
      ["id = 'a' AND", /expected a value/],
      ["id = 'a')", /unexpected text at character 9/],
      ["id ~ 'a'", /unexpected "~"/],
      ['FOO(1)', /no function FOO/],
      ['', /empty/],
      [`${'('.repeat(60)}TRUE${')'.repeat(60)}`, /nest/],
    ] as const) {
      refuses(text, pattern);
    }
  });
});

describe('CQL2 filters items', () => {
  test('a filter that matches nothing keeps nothing; TRUE keeps everything', () => {
    assert.deepEqual(ids("id = 'nonexistent'"), []);
    assert.deepEqual(ids('TRUE'), ['a', 'b', 'c']);
    assert.deepEqual(ids(false, 'cql2-json'), []);
  });

  test('comparisons of texts, numbers, dates and date-times; and, or, not', () => {
    assert.deepEqual(ids("id = 'b'"), ['b']);
    assert.deepEqual(ids("id <> 'b'"), ['a', 'c']);
    assert.deepEqual(ids('gsd < 0.1'), ['c']);
    assert.deepEqual(ids('gsd >= 0.1 AND gsd <= 0.15'), ['b']);
    assert.deepEqual(ids("id = 'a' OR id = 'c'"), ['a', 'c']);
    assert.deepEqual(ids("NOT (id = 'a' OR id = 'c')"), ['b']);
    assert.deepEqual(ids("datetime >= TIMESTAMP('2025-01-01T00:00:00Z')"), ['b', 'c']);
    assert.deepEqual(ids("datetime < '2025-01-01T00:00:00Z'"), ['a'], 'a quoted date-time against a date-time');
    assert.deepEqual(ids('"nadir:capture_date" = DATE(\'2025-04-02\')'), ['b']);
    assert.deepEqual(ids('"nadir:capture_date" > \'2025-01-01\''), ['b', 'c']);
    assert.deepEqual(ids("id LIKE '_'"), ['a', 'b', 'c']);
    assert.deepEqual(ids("id NOT LIKE 'b%'"), ['a', 'c']);
    assert.deepEqual(ids("id IN ('a', 'c', 'x')"), ['a', 'c']);
    assert.deepEqual(ids('gsd BETWEEN 0.06 AND 0.2'), ['a', 'b']);
    assert.deepEqual(ids('"nadir:timezone" IS NULL'), ['a', 'b', 'c']);
  });

  test('S_INTERSECTS with WKT, BBOX, GeoJSON and collections', () => {
    assert.deepEqual(ids('S_INTERSECTS(geometry, POINT(10.5 0.5))'), ['b']);
    assert.deepEqual(ids('S_INTERSECTS(geometry, BBOX(0.5, 0.5, 10.5, 0.6))'), ['a', 'b']);
    assert.deepEqual(ids('S_INTERSECTS(geometry, LINESTRING(-5 0.5, 5 0.5))'), ['a']);
    assert.deepEqual(ids('S_INTERSECTS(geometry, GEOMETRYCOLLECTION(POINT(0.5 0.5), POINT(20.5 0.5)))'), ['a', 'c']);
    assert.deepEqual(ids('S_INTERSECTS(geometry, POINT(50 50))'), []);
    const json = {
      op: 's_intersects',
      args: [{ property: 'geometry' }, { type: 'Polygon', coordinates: square(9, -1, 30, 2) }],
    };
    assert.deepEqual(ids(json, 'cql2-json'), ['b', 'c']);
    assert.deepEqual(ids(JSON.stringify(json), 'cql2-json'), ['b', 'c'], 'cql2-json as text (GET)');
  });

  test('T_INTERSECTS: datetime is the photo span', () => {
    assert.deepEqual(ids("T_INTERSECTS(datetime, TIMESTAMP('2025-10-20T15:00:00Z'))"), ['c'], 'within the span');
    assert.deepEqual(ids("T_INTERSECTS(datetime, DATE('2025-04-02'))"), ['b']);
    assert.deepEqual(ids("T_INTERSECTS(datetime, INTERVAL('2025-01-01T00:00:00Z', '..'))"), ['b', 'c']);
    assert.deepEqual(ids("T_INTERSECTS(datetime, INTERVAL('..', '2024-12-31'))"), ['a']);
    assert.deepEqual(
      ids(
        {
          op: 't_intersects',
          args: [{ property: 'datetime' }, { interval: ['2024-03-14T11:00:00Z', '2024-03-14T11:30:00Z'] }],
        },
        'cql2-json',
      ),
      ['a'],
    );
  });

  test('array functions on tags', () => {
    assert.deepEqual(ids('A_CONTAINS("nadir:tags", (\'disaster:hurricane\'))'), ['c']);
    assert.deepEqual(ids("A_OVERLAPS(\"nadir:tags\", ('disaster', 'disaster:hurricane'))"), ['b', 'c']);
    assert.deepEqual(ids('A_EQUALS("nadir:tags", ())'), ['a']);
    assert.deepEqual(ids('A_CONTAINEDBY("nadir:tags", (\'disaster\'))'), ['a', 'b']);
    assert.deepEqual(ids({ op: 'a_contains', args: [{ property: 'nadir:tags' }, ['disaster']] }, 'cql2-json'), ['b']);
  });

  test('the same filter in both encodings selects the same items', () => {
    const text =
      "(\"nadir:capture_date\" >= DATE('2025-01-01') AND NOT id = 'b') OR S_INTERSECTS(geometry, POINT(0.5 0.5))";
    assert.deepEqual(ids(cql2TextToJson(text), 'cql2-json'), ids(text));
    assert.deepEqual(ids(text), ['a', 'c']);
  });

  test('unknown properties, operators and mismatched types are 400s', () => {
    refuses("cloud_cover = 'x'", /no queryable "cloud_cover"/);
    refuses('id = 1', /cannot compare id \(string\) with a number/);
    refuses("gsd LIKE 'a%'", /LIKE takes a string/);
    refuses('"nadir:tags" = \'a\'', /compares values/);
    refuses('S_INTERSECTS(id, POINT(0 0))', /S_INTERSECTS compares the property geometry/);
    refuses("T_INTERSECTS(id, DATE('2025-01-01'))", /T_INTERSECTS takes times/);
    refuses("datetime > TIMESTAMP('2025-13-01T00:00:00Z')", /RFC 3339/);
    refuses({ op: 'casei', args: ['a'] }, /no operator "casei"/, 'cql2-json');
    refuses({ op: 'and', args: [true] }, /at least 2/, 'cql2-json');
    refuses('{nope', /not JSON/, 'cql2-json');
    refuses({ op: '=', args: [{ property: 'id' }, 'a'] }, /is a text/, 'cql2-text');
    refuses('S_INTERSECTS(geometry, POINT(200 0))', /longitudes/);
  });
});
