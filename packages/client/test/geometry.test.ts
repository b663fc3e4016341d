import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { aoiAround, MAX_IMAGE_SIZE, nativeImageSize, parseBBox, parsePoint } from '../src/area.js';
import { NadirUsageError } from '../src/errors.js';
import { displaySize, panoramaGrid, panoramaRotation, rotatedGridTileFor, serverTileFor } from '../src/panorama.js';
import { planDownload } from '../src/plan.js';
import { parseZoomRange, tileCount, tileRange } from '../src/tile-grid.js';
import { TILE_TYPES } from '../src/types.js';

describe('sizes and areas', () => {
  test('the native size is 2 x radius / GSD, per type, capped at 5000', () => {
    assert.deepEqual(nativeImageSize(50, 0.15), { size: 667, gsd: 100 / 667, capped: false });
    assert.equal(nativeImageSize(50, 0.3).size, 333);
    assert.deepEqual(nativeImageSize(100, 0.02), { size: MAX_IMAGE_SIZE, gsd: 0.04, capped: true });
    assert.equal(nativeImageSize(1, 5).size, 1);
    assert.throws(() => nativeImageSize(50, 0), NadirUsageError);
  });

  test('a download plan has one file per survey and type the survey has, named by date, survey, type, area and size', () => {
    const surveys = [
      { id: 'b', captureDate: '2025-10-20', pixelSizes: { TrueOrtho: 0.15, DetailDsm: 0.3 } },
      { id: 'a', captureDate: '2024-03-14', pixelSizes: { TrueOrtho: 0.2 } },
    ];
    const plan = planDownload(surveys, ['TrueOrtho', 'DetailDsm'], 'tif', { point: { lon: 0, lat: 0 }, radius: 30 });
    assert.deepEqual(
      plan.images.map((i) => [i.fileName, i.size]),
      [
        ['2025-10-20_b_TrueOrtho_0,0_30m_400px.tif', 400],
        ['2025-10-20_b_DetailDsm_0,0_30m_200px.tif', 200],
        ['2024-03-14_a_TrueOrtho_0,0_30m_300px.tif', 300],
      ],
    );
    assert.deepEqual(plan.missing, [{ surveyId: 'a', type: 'DetailDsm' }]);
  });

  test('the AOI around a box: centred, its square holds the box (ground metres)', () => {
    // 0.001 degrees of longitude at the equator is 111.32 m; of latitude about 110.6 m.
    const aoi = aoiAround({ west: 0, south: 0, east: 0.001, north: 0.0005 });
    assert.ok(Math.abs(aoi.point.lon - 0.0005) < 1e-12);
    assert.ok(Math.abs(aoi.point.lat - 0.00025) < 1e-6);
    assert.ok(aoi.radius >= 55.66 && aoi.radius <= 55.67, String(aoi.radius));
    // At 60 degrees a degree of longitude is half as long on the ground.
    assert.ok(Math.abs(aoiAround({ west: 0, south: 59.9999, east: 0.001, north: 60.0001 }).radius - 27.83) < 0.02);
  });

  test('points and boxes parse strictly', () => {
    assert.deepEqual(parsePoint('-85.41,29.94'), { lon: -85.41, lat: 29.94 });
    for (const bad of ['', '1', '1,2,3', '0x1,2', '1,,', 'a,b', '181,0', '0,86'])
      assert.throws(() => parsePoint(bad), NadirUsageError, bad);
    assert.deepEqual(parseBBox('-1,-2,1,2'), { west: -1, south: -2, east: 1, north: 2 });
    for (const bad of ['1,2,3', '1,2,0,3', '0,2,1,1', '0,,1,2'])
      assert.throws(() => parseBBox(bad), NadirUsageError, bad);
  });
});

describe('tile grids', () => {
  test('the tiles a box touches at a zoom', () => {
    const whole = tileRange({ west: -180, south: -85, east: 180, north: 85 }, 2);
    assert.deepEqual(whole, { z: 2, minX: 0, minY: 0, maxX: 3, maxY: 3 });
    // A small box in the north-east quarter at zoom 1 is tile (1, 0).
    assert.deepEqual(tileRange({ west: 10, south: 10, east: 11, north: 11 }, 1), {
      z: 1,
      minX: 1,
      minY: 0,
      maxX: 1,
      maxY: 0,
    });
    assert.equal(tileCount(tileRange({ west: -85.419, south: 29.9452, east: -85.4172, north: 29.9465 }, 20)), 6 * 5);
  });

  test('zoom ranges', () => {
    assert.deepEqual(parseZoomRange('18-20'), { min: 18, max: 20 });
    assert.deepEqual(parseZoomRange('19'), { min: 19, max: 19 });
    for (const bad of ['20-18', '25', '-1', '1-', 'x']) assert.throws(() => parseZoomRange(bad), NadirUsageError, bad);
  });
});

describe('panorama grids', () => {
  test("the grid mapping and its inverse are each other's inverse, for every layer and tile of zoom 3", () => {
    for (const type of TILE_TYPES) {
      for (let x = 0; x < 8; x++) {
        for (let y = 0; y < 8; y++) {
          assert.deepEqual(rotatedGridTileFor(type, serverTileFor(type, { z: 3, x, y })), { z: 3, x, y });
        }
      }
    }
  });

  test("the documented mappings (decisions.md): East (2^z-1-y', x'), West (y', 2^z-1-x'), South both flipped", () => {
    const at = { z: 4, x: 3, y: 5 };
    assert.deepEqual(serverTileFor('East', at), { z: 4, x: 10, y: 3 });
    assert.deepEqual(serverTileFor('West', at), { z: 4, x: 5, y: 12 });
    assert.deepEqual(serverTileFor('South', at), { z: 4, x: 12, y: 10 });
    assert.deepEqual(serverTileFor('North', at), at);
    assert.deepEqual([panoramaRotation('East'), panoramaRotation('West'), panoramaRotation('South')], [270, 90, 180]);
    assert.deepEqual(displaySize('North'), { width: 256, height: 192 });
    assert.deepEqual(displaySize('Vert'), { width: 256, height: 256 });
  });

  test('an East grid over a 2x3 block of server tiles is 3 wide and 2 high, and holds each server tile once', () => {
    const grid = panoramaGrid('East', 5, { minX: 10, minY: 20, maxX: 11, maxY: 22 });
    assert.equal(grid.length, 2);
    assert.ok(grid.every((row) => row.length === 3));
    const seen = grid
      .flat()
      .map((t) => `${t.x},${t.y}`)
      .sort();
    assert.deepEqual(seen, ['10,20', '10,21', '10,22', '11,20', '11,21', '11,22']);
    // East up: the top row is the east column of server tiles, the west (left) end is the north.
    assert.deepEqual(grid[0]?.[0], { z: 5, x: 11, y: 20 });
  });
});
