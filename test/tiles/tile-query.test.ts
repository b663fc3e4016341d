/**
 * tileQueryKey (src/tiles/tile-query.ts) names a remembered pass-through answer: two queries whose
 * answers may differ must never share a key, and the same query must always get the same one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  parseTileAddress,
  parseTileQuery,
  type TilePath,
  type TileQueryString,
  tileQueryKey,
} from '../../src/tiles/tile-query.js';

const today = () => '2026-11-28';

function keyOf(path: Partial<TilePath>, query: TileQueryString = {}): string {
  return tileQueryKey(parseTileQuery({ contentType: 'Vert', z: '18', x: '5', file: '7.jpg', ...path }, query, today));
}

test('queries that may be answered differently get different keys', () => {
  const variants: [Partial<TilePath>, TileQueryString?][] = [
    [{}],
    [{ file: '7.png' }],
    [{ file: '7.img' }],
    [{ contentType: 'North' }],
    [{ z: '19' }],
    [{ x: '6' }],
    [{ file: '8.jpg' }],
    [{ z: '1', x: '1', file: '0.jpg' }],
    [{}, { since: '2025-01-01' }],
    [{}, { until: '2025-01-01' }],
    [{}, { since: '2025-01-01', until: '2025-01-02' }],
    [{}, { since: '30D' }],
    [{}, { mosaic: 'earliest' }],
    [{}, { include: 'weather:clear' }],
    [{}, { exclude: 'weather:clear' }],
    [{}, { include: 'weather:clear', exclude: 'season:winter' }],
    [{}, { include: 'weather:clear,season:winter' }],
    [{ surveyId: 'a' }],
    [{ surveyId: 'a b' }],
    [{ surveyId: 'Vert 18 5 7 jpg - - newest' }],
    [{ surveyId: '"a",null' }],
    [{ surveyId: 'a' }, { include: 'weather:clear' }],
  ];
  const keys = variants.map(([path, query]) => keyOf(path, query));
  assert.equal(new Set(keys).size, keys.length, keys.join('\n'));
});

test('the same query gets the same key, however it was written', () => {
  assert.equal(keyOf({}), keyOf({}, { mosaic: 'latest' }));
  assert.equal(keyOf({}, { since: '30D' }), keyOf({}, { since: '2026-10-29' }));
  assert.equal(keyOf({}, { apikey: 'one' }), keyOf({}, { apikey: 'two' }));
});

test('z, x and y are whole numbers in the grid, written in plain digits', () => {
  assert.deepEqual(parseTileAddress('24', '16777215', '0000000001.png'), {
    tile: { z: 24, x: 16777215, y: 1 },
    format: 'png',
  });
  assert.deepEqual(parseTileAddress('0', '0', '0.jpg'), { tile: { z: 0, x: 0, y: 0 }, format: 'jpg' });
  assert.deepEqual(parseTileAddress('007', '3', '5.img'), { tile: { z: 7, x: 3, y: 5 }, format: 'img' });
  const refused: [string, string, string][] = [
    ['25', '0', '0.jpg'],
    ['24', '16777216', '0.jpg'],
    ['3', '0', '8.jpg'],
    ['', '0', '0.jpg'],
    ['1', '', '0.jpg'],
    ['1', '0', '.jpg'],
    ['24', '-1', '0.jpg'],
    ['24', '+1', '0.jpg'],
    ['24', '1+', '0.jpg'],
    ['24', '1/', '0.jpg'],
    ['24', '1:', '0.jpg'],
    ['24', ' 1', '0.jpg'],
    ['24', '1 ', '0.jpg'],
    ['24', '1.0', '0.jpg'],
    ['24', '1e1', '0.jpg'],
    ['24', '0x1', '0.jpg'],
    ['24', '１', '0.jpg'],
    ['24', '٣', '0.jpg'],
    ['24', '00000000001', '0.jpg'],
    ['1', '0', '0'],
    ['1', '0', '0.gif'],
  ];
  for (const [z, x, file] of refused)
    assert.throws(() => parseTileAddress(z, x, file), { code: 'INVALID_PARAMETER' }, `${z}/${x}/${file}`);
});
