import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CogGrid, planCogGrid } from '../../src/geo/cog-grid.js';
import {
  type Bounds,
  lonLatToMercator,
  MAX_ZOOM,
  ORIGIN_SHIFT,
  resolutionAtZoom,
  tileBounds,
} from '../../src/geo/web-mercator.js';
import { approx, mulberry32 } from './helpers.js';

const WORLD = 2 * ORIGIN_SHIFT;
const res = (z: number) => WORLD / 256 / 2 ** z; // written out, not resolutionAtZoom

/** Position of a Mercator coordinate in units of `span` from the grid origin (top-left). */
const unitsX = (x: number, span: number) => (x + ORIGIN_SHIFT) / span;
const unitsY = (y: number, span: number) => (ORIGIN_SHIFT - y) / span;

function assertIntegerish(value: number, message: string): void {
  approx(value, Math.round(value), 1e-6, message);
}

/** Every invariant a plan must satisfy, whatever the input. */
function checkPlan(grid: CogGrid, extent: Bounds): void {
  const { zoom, overviewCount, bounds } = grid;
  assert.equal(grid.minZoom, zoom - overviewCount);
  assert.ok(grid.minZoom >= 0);
  assert.equal(grid.resolution, resolutionAtZoom(zoom));
  const block = 256 * 2 ** overviewCount;
  assert.equal(grid.width % block, 0, `width ${grid.width} is a multiple of ${block}`);
  assert.equal(grid.height % block, 0, `height ${grid.height} is a multiple of ${block}`);
  approx(bounds.maxX - bounds.minX, grid.width * grid.resolution, 1e-6);
  approx(bounds.maxY - bounds.minY, grid.height * grid.resolution, 1e-6);
  // Each overview level k starts on a tile boundary of zoom - k.
  for (let k = 0; k <= overviewCount; k++) {
    const span = 256 * grid.resolution * 2 ** k;
    assertIntegerish(unitsX(bounds.minX, span), `minX on the z${zoom - k} grid`);
    assertIntegerish(unitsY(bounds.maxY, span), `maxY on the z${zoom - k} grid`);
  }
  // tileX/tileY name the top-left tile.
  const topLeft = tileBounds({ z: zoom, x: grid.tileX, y: grid.tileY });
  approx(topLeft.minX, bounds.minX, 1e-6);
  approx(topLeft.maxY, bounds.maxY, 1e-6);
  // Covers the input.
  assert.ok(bounds.minX <= extent.minX + 1e-6 && bounds.maxX >= extent.maxX - 1e-6, 'covers x');
  assert.ok(bounds.minY <= extent.minY + 1e-6 && bounds.maxY >= extent.maxY - 1e-6, 'covers y');
  // The coarsest level holds it in at most 2 x 2 tiles.
  assert.ok(
    grid.width / block <= 2 && grid.height / block <= 2,
    `coarsest ${grid.width / block}x${grid.height / block}`,
  );
}

/** A box of w x h tiles at zoom z starting at tile (x, y), inset by `inset` tiles. */
function tileBox(z: number, x: number, y: number, w: number, h: number, inset = 0): Bounds {
  const span = 256 * res(z);
  return {
    minX: -ORIGIN_SHIFT + (x + inset) * span,
    maxX: -ORIGIN_SHIFT + (x + w - inset) * span,
    maxY: ORIGIN_SHIFT - (y + inset) * span,
    minY: ORIGIN_SHIFT - (y + h - inset) * span,
  };
}

describe('planCogGrid', () => {
  it('chooses the nearest zoom in log2 of the source resolution', () => {
    const [x, y] = lonLatToMercator(10, 44);
    const extent = { minX: x, minY: y, maxX: x + 100, maxY: y + 100 };
    assert.equal(planCogGrid(extent, 0.075).zoom, 21);
    assert.equal(planCogGrid(extent, res(18)).zoom, 18);
    assert.equal(planCogGrid(extent, res(18) * 2 ** 0.49).zoom, 18);
    assert.equal(planCogGrid(extent, res(18) * 2 ** 0.51).zoom, 17);
    assert.equal(planCogGrid(extent, res(18) / 2 ** 0.51).zoom, 19);
    assert.equal(planCogGrid(extent, 0.3).resolution, resolutionAtZoom(19));
  });

  it('plans a small survey: one 256 px tile when it sits inside a tile', () => {
    const extent = tileBox(19, 270_000, 190_000, 1, 1, 0.2);
    const grid = planCogGrid(extent, res(19));
    assert.deepEqual(
      { zoom: grid.zoom, minZoom: grid.minZoom, overviewCount: grid.overviewCount, w: grid.width, h: grid.height },
      { zoom: 19, minZoom: 19, overviewCount: 0, w: 256, h: 256 },
    );
    assert.deepEqual([grid.tileX, grid.tileY], [270_000, 190_000]);
    checkPlan(grid, extent);
  });

  it('an extent exactly on tile edges adds no extra tile', () => {
    for (const [x, y] of [
      [1000, 2000],
      [1001, 2001],
      [0, 0],
    ] as const) {
      const extent = tileBox(12, x, y, 1, 1);
      const grid = planCogGrid(extent, res(12));
      assert.equal(grid.width, 256, `width at ${x},${y}`);
      assert.equal(grid.height, 256, `height at ${x},${y}`);
      assert.deepEqual([grid.tileX, grid.tileY], [x, y]);
    }
    // Using the library's own tile bounds (float noise included) gives the same answer.
    const viaTileBounds = planCogGrid(tileBounds({ z: 20, x: 555_555, y: 333_333 }), res(20));
    assert.deepEqual([viaTileBounds.width, viaTileBounds.height], [256, 256]);
    // Two tiles exactly: 2 x 1 at full resolution, one overview level.
    const two = planCogGrid(tileBox(15, 10_000, 5_000, 2, 1), res(15));
    assert.equal(two.overviewCount, 1);
    assert.deepEqual([two.width, two.height, two.tileX, two.tileY], [512, 512, 10_000, 5_000]);
  });

  it('a hair over a tile edge does add a tile', () => {
    const span = 256 * res(16);
    const extent = tileBox(16, 40_000, 30_000, 1, 1);
    extent.maxX += span * 0.001;
    const grid = planCogGrid(extent, res(16));
    assert.equal(grid.overviewCount, 1);
    assert.equal(grid.width, 512);
    checkPlan(grid, extent);
  });

  it('snaps outward to 2^overviewCount blocks when the survey straddles block edges', () => {
    // 3 x 3 tiles starting at an odd tile: span 3 -> 2 overviews -> 4-tile blocks.
    const extent = tileBox(18, 101, 203, 3, 3, 0.1);
    const grid = planCogGrid(extent, res(18));
    assert.equal(grid.overviewCount, 2);
    assert.deepEqual([grid.tileX, grid.tileY], [100, 200]);
    assert.deepEqual([grid.width, grid.height], [1024, 2048]); // x 100..104, y 200..208
    checkPlan(grid, extent);
  });

  it('keeps the invariants for random extents at random zooms', () => {
    const rand = mulberry32(42);
    for (let i = 0; i < 500; i++) {
      const zoom = 5 + Math.floor(rand() * 18);
      const span = 256 * res(zoom);
      const tiles = 2 ** zoom;
      const cx = (rand() * 0.8 + 0.1) * WORLD - ORIGIN_SHIFT;
      const cy = (rand() * 0.8 + 0.1) * WORLD - ORIGIN_SHIFT;
      const w = Math.min(rand() ** 3 * 40 * span, (tiles / 10) * span);
      const h = Math.min(rand() ** 3 * 40 * span, (tiles / 10) * span);
      const extent = { minX: cx - w / 2, maxX: cx + w / 2, minY: cy - h / 2, maxY: cy + h / 2 };
      const sourceRes = res(zoom) * 2 ** ((rand() - 0.5) * 0.98);
      const grid = planCogGrid(extent, sourceRes);
      assert.equal(grid.zoom, zoom);
      checkPlan(grid, extent);
      // Not wasteful: at most one block of padding each side of the survey.
      const blockSpan = span * 2 ** grid.overviewCount;
      assert.ok(grid.bounds.maxX - grid.bounds.minX < w + 2 * blockSpan + 1e-6);
    }
  });

  it('clamps the zoom to 0..MAX_ZOOM', () => {
    const [x, y] = lonLatToMercator(10, 44);
    const tiny = planCogGrid({ minX: x, minY: y, maxX: x + 0.01, maxY: y + 0.01 }, 1e-6);
    assert.equal(tiny.zoom, MAX_ZOOM);
    checkPlan(tiny, { minX: x, minY: y, maxX: x + 0.01, maxY: y + 0.01 });
    const world = { minX: -ORIGIN_SHIFT, minY: -ORIGIN_SHIFT, maxX: ORIGIN_SHIFT, maxY: ORIGIN_SHIFT };
    const coarse = planCogGrid(world, 1e7);
    assert.deepEqual(
      [coarse.zoom, coarse.minZoom, coarse.overviewCount, coarse.width, coarse.height, coarse.tileX, coarse.tileY],
      [0, 0, 0, 256, 256, 0, 0],
    );
    // The whole world at z2 needs 4 x 4 tiles and 2 overview levels, but never below zoom 0.
    const z2 = planCogGrid(world, res(2));
    assert.deepEqual([z2.zoom, z2.minZoom, z2.width, z2.height], [2, 0, 1024, 1024]);
    checkPlan(z2, world);
  });

  it('rejects resolutions that are not positive finite numbers', () => {
    const extent = { minX: 0, minY: 0, maxX: 10, maxY: 10 };
    for (const bad of [0, -0.3, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => planCogGrid(extent, bad), /resolution/, String(bad));
    }
  });
});
