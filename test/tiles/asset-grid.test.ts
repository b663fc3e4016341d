import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssetGridError, assetGrid, levelGrid } from '../../src/tiles/asset-grid.js';
import { planTile } from '../../src/tiles/planner.js';
import { assetAt, candidate, res } from './helpers.js';

describe('assetGrid', () => {
  const asset = assetAt(16, 18, 16493, 23970, 1024, 2048);

  it('reads the tile origin at minZoom and gives each level in whole tiles', () => {
    const grid = assetGrid(asset);
    assert.deepEqual(grid, { minZoom: 16, maxZoom: 18, originX: 16493, originY: 23970, width: 1024, height: 2048 });
    assert.deepEqual(levelGrid(grid, 18), {
      level: 0,
      zoom: 18,
      originX: 65972,
      originY: 95880,
      width: 1024,
      height: 2048,
      columns: 4,
      rows: 8,
    });
    assert.deepEqual(levelGrid(grid, 16), {
      level: 2,
      zoom: 16,
      originX: 16493,
      originY: 23970,
      width: 256,
      height: 512,
      columns: 1,
      rows: 2,
    });
    assert.throws(() => levelGrid(grid, 15), RangeError);
    assert.throws(() => levelGrid(grid, 19), RangeError);
  });

  it('accepts float noise in the bounds', () => {
    const noisy = {
      ...asset,
      bounds: { ...asset.bounds, minX: asset.bounds.minX + 1e-7, maxY: asset.bounds.maxY - 1e-7 },
    };
    assert.deepEqual(assetGrid(noisy), assetGrid(asset));
  });

  it('rejects assets that are not grid-aligned COGs, naming the problem', () => {
    const r = res(18);
    const shift = (dx: number, dy: number) => ({
      ...asset,
      bounds: {
        minX: asset.bounds.minX + dx,
        maxX: asset.bounds.maxX + dx,
        minY: asset.bounds.minY + dy,
        maxY: asset.bounds.maxY + dy,
      },
    });
    const cases: [unknown, RegExp][] = [
      [shift(r, 0), /tile boundary/], // one pixel off
      [shift(0, -256 * r), /tile boundary/], // a z18 tile off: fine at z18, not at z16
      [{ ...asset, width: 1023 }, /divide|span/],
      [{ ...asset, width: 1028 }, /span/],
      [{ ...asset, minZoom: 19 }, /above its maxZoom/],
      [{ ...asset, maxZoom: 25 }, /0\.\.24/],
      [{ ...asset, minZoom: 1.5 }, /integers/],
      [{ ...asset, width: 0 }, /positive/],
      [{ ...asset, bounds: { ...asset.bounds, minX: Number.NaN } }, /finite/],
    ];
    for (const [bad, message] of cases) {
      assert.throws(
        () => assetGrid(bad as typeof asset),
        (error: Error) => {
          assert.ok(error instanceof AssetGridError);
          assert.match(error.message, message);
          return true;
        },
      );
    }
    // ... and so does the planner, rather than drawing it in the wrong place.
    assert.throws(() => planTile({ z: 18, x: 65972, y: 95880 }, [candidate('bad', shift(r, 0))]), AssetGridError);
  });
});
