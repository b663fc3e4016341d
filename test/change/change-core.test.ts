/** The change core's arithmetic and ramp on small hand-made arrays. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { aoiGrid, tileGrid } from '../../src/geo/aoi-grid.js';
import { CHANGE_RAMP, changeColour, changeColourFile } from '../../src/raster/change-ramp.js';
import { changeFigures, subtractInPlace } from '../../src/raster/dsm-change.js';

const N = -9999;

describe('change core', () => {
  test('subtraction: after - before, nodata where either has none, and the pixels compared', async () => {
    const after = new Float32Array([10, 5, N, 7, 3.25]);
    const before = new Float32Array([4, N, 2, 7, 5.5]);
    assert.equal(await subtractInPlace(after, before), 3);
    assert.deepEqual([...after], [6, N, N, 0, -2.25]);
  });

  test('subtraction over more than one slice counts every pixel', async () => {
    const size = (1 << 18) * 3 + 7;
    const after = new Float32Array(size).fill(3);
    const before = new Float32Array(size).fill(1);
    before[size - 1] = N;
    assert.equal(await subtractInPlace(after, before), size - 1);
    assert.equal(after[size - 2], 2);
    assert.equal(after[size - 1], N);
  });

  test('figures: areas and volumes beyond the threshold, in ground metres', async () => {
    // 4 x 4 pixels over a 2 m square: 0.25 m² each.
    const grid = aoiGrid({ lon: 0, lat: 0, radius: 1 }, 4);
    const change = new Float32Array(16).fill(0);
    change.set([-5, -3, -2, 2.5, 10, N], 0);
    const figures = await changeFigures({ change, compared: 15 }, grid, 2);
    assert.equal(figures.pixelArea, 0.25);
    assert.equal(figures.aoiArea, 4);
    assert.equal(figures.comparedArea, 3.75);
    assert.equal(figures.comparedShare, 15 / 16);
    assert.deepEqual(figures.loss, { area: 0.5, volume: 2 });
    assert.deepEqual(figures.gain, { area: 0.5, volume: 3.125 });
  });

  test('the ramp: its stops, linear between, clamped beyond; white at 0; the gdaldem file lists them', () => {
    for (const stop of CHANGE_RAMP) assert.deepEqual(changeColour(stop.metres), stop.colour);
    assert.deepEqual(changeColour(-50), CHANGE_RAMP[0]?.colour);
    assert.deepEqual(changeColour(50), CHANGE_RAMP.at(-1)?.colour);
    assert.deepEqual(changeColour(0), [247, 247, 247]);
    assert.deepEqual(changeColour(3.5), [50, 125, 184]);
    const lines = changeColourFile().trim().split('\n');
    assert.equal(lines.length, CHANGE_RAMP.length + 1);
    assert.equal(lines.at(-1), 'nv 0 0 0 0');
    // Red for loss, blue for gain.
    const [lossR, , lossB] = changeColour(-5);
    const [gainR, , gainB] = changeColour(5);
    assert.ok(lossR > lossB && gainB > gainR);
  });

  test('a tile grid is 256 px over the tile bounds', () => {
    const grid = tileGrid({ z: 1, x: 0, y: 0 });
    assert.equal(grid.size, 256);
    assert.deepEqual(
      grid.geoTransform,
      [-20037508.342789244, 78271.51696402048, 0, 20037508.342789244, 0, -78271.51696402048],
    );
  });
});
