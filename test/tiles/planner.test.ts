import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lonLatToMercator } from '../../src/geo/web-mercator.js';
import { MAX_UNDERZOOM, type PlannableAsset, type PlannedLayer, planTile } from '../../src/tiles/planner.js';
import { approx, mulberry32 } from '../geo/helpers.js';
import {
  assetAt,
  assetExtent,
  candidate,
  cogPixels,
  HALF_WORLD,
  ingestedAsset,
  intersectionArea,
  mapTile,
  outputPixels,
  res,
  tileRange,
  WORLD,
} from './helpers.js';

const FULL = { x: 0, y: 0, width: 256, height: 256 };

function assertSameBounds(
  actual: { minX: number; minY: number; maxX: number; maxY: number },
  expected: typeof actual,
  message: string,
): void {
  approx(actual.minX, expected.minX, 1e-6, `${message} minX`);
  approx(actual.minY, expected.minY, 1e-6, `${message} minY`);
  approx(actual.maxX, expected.maxX, 1e-6, `${message} maxX`);
  approx(actual.maxY, expected.maxY, 1e-6, `${message} maxY`);
}

/**
 * Whatever the zoom: the reads land inside the tile without overlapping, each read's source pixels
 * and target pixels are the same ground, and together they cover exactly the asset's part of the tile.
 */
function checkCoversAssetPart(asset: PlannableAsset, z: number, x: number, y: number, layer: PlannedLayer): void {
  const where = `z${z}/${x}/${y}`;
  const tile = mapTile(z, x, y);
  const part = assetExtent(asset);
  const expected = {
    minX: Math.max(tile.minX, part.minX),
    maxX: Math.min(tile.maxX, part.maxX),
    minY: Math.max(tile.minY, part.minY),
    maxY: Math.min(tile.maxY, part.maxY),
  };
  assert.ok(layer.reads.length > 0, `${where}: reads`);
  let area = 0;
  const hull = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
  layer.reads.forEach((read, i) => {
    const { target, source } = read;
    assert.ok(target.x >= 0 && target.y >= 0 && target.x + target.width <= 256 && target.y + target.height <= 256);
    assert.ok(source.x >= 0 && source.y >= 0 && source.x + source.width <= 256 && source.y + source.height <= 256);
    approx(target.width * layer.scale, source.width, 1e-9, `${where}: scale x`);
    approx(target.height * layer.scale, source.height, 1e-9, `${where}: scale y`);
    const ground = outputPixels(z, x, y, target);
    assertSameBounds(cogPixels(asset, layer.level, read.col, read.row, source), ground, `${where} read ${i}`);
    area += (ground.maxX - ground.minX) * (ground.maxY - ground.minY);
    hull.minX = Math.min(hull.minX, ground.minX);
    hull.minY = Math.min(hull.minY, ground.minY);
    hull.maxX = Math.max(hull.maxX, ground.maxX);
    hull.maxY = Math.max(hull.maxY, ground.maxY);
    for (const other of layer.reads.slice(i + 1)) {
      assert.equal(intersectionArea(ground, outputPixels(z, x, y, other.target)), 0, `${where}: overlap`);
    }
  });
  assertSameBounds(hull, expected, `${where} hull`);
  approx(area, intersectionArea(tile, part), 1e-6 * res(z) ** 2 * 65536, `${where}: area`);
}

// A 1.5 km x 1.1 km survey in Madison, WI at 0.3 m: z19, snapped to 32-tile blocks (5 overviews).
const [cx, cy] = lonLatToMercator(-89.4012, 43.0731);
const madison = ingestedAsset({ minX: cx - 1000, maxX: cx + 1100, minY: cy - 700, maxY: cy + 800 }, 0.3);

describe('planTile at the asset zooms (aligned)', () => {
  it('the ingested grid is what the test expects', () => {
    assert.equal(madison.maxZoom, 19);
    assert.equal(madison.minZoom, 14);
  });

  it('every map tile at every zoom in [minZoom, maxZoom] is exactly one whole COG tile', () => {
    for (let z = madison.minZoom; z <= madison.maxZoom; z++) {
      const level = madison.maxZoom - z;
      const seen = new Set<string>();
      const { x0, x1, y0, y1 } = tileRange(z, madison.bounds, 1);
      for (let x = x0; x <= x1; x++) {
        for (let y = y0; y <= y1; y++) {
          const tile = mapTile(z, x, y);
          const inside = intersectionArea(tile, madison.bounds) > 0;
          const plan = planTile({ z, x, y }, [candidate('madison', madison)]);
          if (!inside) {
            assert.deepEqual(plan.layers, [], `z${z}/${x}/${y} is outside`);
            assert.deepEqual(plan.skipped, [{ surveyId: 'madison', candidateIndex: 0, reason: 'outside-asset' }]);
            continue;
          }
          const [layer] = plan.layers;
          assert.ok(layer && plan.layers.length === 1, `z${z}/${x}/${y}: one layer`);
          assert.deepEqual(
            [layer.level, layer.levelZoom, layer.scale, layer.passThrough, layer.reads.length],
            [level, z, 1, true, 1],
          );
          const read = layer.reads[0]!;
          assert.deepEqual([read.source, read.target], [FULL, FULL]);
          // The COG tile's bounds, from the asset's corner and the level's resolution, ARE the map tile's.
          assertSameBounds(cogPixels(madison, level, read.col, read.row), tile, `z${z}/${x}/${y}`);
          seen.add(`${read.col},${read.row}`);
        }
      }
      // ... and every COG tile of the level is some map tile, once.
      const tiles = (madison.width / 2 ** level / 256) * (madison.height / 2 ** level / 256);
      assert.equal(seen.size, tiles, `z${z}: COG tiles used`);
    }
  });

  it('a level whose size is not a multiple of 256 gets cropped edge reads, not pass-through', () => {
    // 1000 x 600 px at z18, corner on a z16 tile: level 0 has 4 x 3 tiles, the last column 232 px.
    const asset = assetAt(16, 18, 17_000, 23_000, 1000, 600);
    const plan = planTile({ z: 18, x: 68_003, y: 92_002 }, [candidate('a', asset)]);
    const layer = plan.layers[0]!;
    assert.deepEqual(layer.reads, [
      {
        col: 3,
        row: 2,
        source: { x: 0, y: 0, width: 232, height: 88 },
        target: { x: 0, y: 0, width: 232, height: 88 },
      },
    ]);
    assert.equal(layer.passThrough, false);
    const inner = planTile({ z: 18, x: 68_002, y: 92_001 }, [candidate('a', asset)]).layers[0]!;
    assert.equal(inner.passThrough, true);
    for (let z = 12; z <= 18; z++) {
      const { x0, x1, y0, y1 } = tileRange(z, assetExtent(asset), 1);
      for (let x = x0; x <= x1; x++) {
        for (let y = y0; y <= y1; y++) {
          const found = planTile({ z, x, y }, [candidate('a', asset)]).layers[0];
          assert.equal(found !== undefined, intersectionArea(mapTile(z, x, y), assetExtent(asset)) > 0);
          if (found) checkCoversAssetPart(asset, z, x, y, found);
        }
      }
    }
  });
});

describe('planTile below minZoom (downsampled)', () => {
  it(`draws down to minZoom - ${MAX_UNDERZOOM} from the coarsest level, covering exactly the asset's part`, () => {
    const coarsest = madison.maxZoom - madison.minZoom;
    for (let z = madison.minZoom - MAX_UNDERZOOM; z < madison.minZoom; z++) {
      const { x0, x1, y0, y1 } = tileRange(z, madison.bounds, 1);
      let drawn = 0;
      for (let x = x0; x <= x1; x++) {
        for (let y = y0; y <= y1; y++) {
          const plan = planTile({ z, x, y }, [candidate('madison', madison)]);
          const layer = plan.layers[0];
          if (intersectionArea(mapTile(z, x, y), madison.bounds) === 0) {
            assert.equal(layer, undefined);
            continue;
          }
          assert.ok(layer);
          drawn++;
          const scale = 2 ** (madison.minZoom - z);
          assert.deepEqual(
            [layer.level, layer.levelZoom, layer.scale, layer.passThrough],
            [coarsest, 14, scale, false],
          );
          for (const read of layer.reads) {
            assert.deepEqual(read.source, FULL, 'ingested COG tiles are read whole');
            for (const v of Object.values(read.target)) assert.ok(Number.isInteger(v), 'whole output pixels');
            assert.equal(read.target.width, 256 / scale);
          }
          checkCoversAssetPart(madison, z, x, y, layer);
        }
      }
      assert.ok(drawn >= 1, `z${z} draws the survey somewhere`);
    }
  });

  it('cropped edge tiles shrink to fractional windows that still cover exactly the asset', () => {
    const asset = assetAt(16, 18, 17_000, 23_000, 1000, 600); // coarsest level: 250 x 150 px
    const layer = planTile({ z: 12, x: 1062, y: 1437 }, [candidate('a', asset)]).layers[0]!;
    assert.equal(layer.scale, 16);
    assert.deepEqual(layer.reads, [
      {
        col: 0,
        row: 0,
        source: { x: 0, y: 0, width: 250, height: 150 },
        target: { x: 8 * 16, y: 8 * 16, width: 250 / 16, height: 150 / 16 },
      },
    ]);
    checkCoversAssetPart(asset, 12, 1062, 1437, layer);
  });

  it('a tile that only shares an edge with the asset gets nothing', () => {
    const asset = assetAt(16, 18, 400, 800, 1024, 1024);
    // At z14 the asset starts at the top-left corner of tile (100, 200).
    assert.equal(planTile({ z: 14, x: 100, y: 200 }, [candidate('a', asset)]).layers.length, 1);
    for (const [x, y] of [
      [99, 200],
      [100, 199],
      [99, 199],
      [101, 200],
    ] as const) {
      const plan = planTile({ z: 14, x, y }, [candidate('a', asset)]);
      assert.deepEqual(plan.layers, [], `${x},${y}`);
      assert.equal(plan.skipped[0]?.reason, 'outside-asset');
    }
  });
});

describe('planTile zoom limits', () => {
  const centreTile = (z: number) => {
    const span = WORLD / 2 ** z;
    return { z, x: Math.floor((cx + HALF_WORLD) / span), y: Math.floor((HALF_WORLD - cy) / span) };
  };

  it('above maxZoom: not drawn', () => {
    for (let z = madison.maxZoom + 1; z <= 24; z++) {
      const plan = planTile(centreTile(z), [candidate('madison', madison)]);
      assert.deepEqual(plan.layers, []);
      assert.deepEqual(plan.skipped, [{ surveyId: 'madison', candidateIndex: 0, reason: 'above-max-zoom' }]);
    }
    assert.equal(planTile(centreTile(madison.maxZoom), [candidate('madison', madison)]).layers.length, 1);
  });

  it(`more than ${MAX_UNDERZOOM} zooms below minZoom: not drawn, unless the caller allows more`, () => {
    for (let z = 0; z < madison.minZoom - MAX_UNDERZOOM; z++) {
      const plan = planTile(centreTile(z), [candidate('madison', madison)]);
      assert.deepEqual(plan.layers, []);
      assert.equal(plan.skipped[0]?.reason, 'below-min-zoom');
    }
    const deeper = planTile(centreTile(madison.minZoom - 6), [candidate('madison', madison)], { maxUnderzoom: 6 });
    assert.equal(deeper.layers[0]?.scale, 64);
    checkCoversAssetPart(madison, deeper.tile.z, deeper.tile.x, deeper.tile.y, deeper.layers[0]!);
    const none = planTile(centreTile(madison.minZoom - 1), [candidate('madison', madison)], { maxUnderzoom: 0 });
    assert.equal(none.skipped[0]?.reason, 'below-min-zoom');
  });

  it('rejects invalid tiles and options', () => {
    const c = [candidate('madison', madison)];
    for (const tile of [
      { z: 25, x: 0, y: 0 },
      { z: -1, x: 0, y: 0 },
      { z: 3, x: 8, y: 0 },
      { z: 3, x: 0, y: -1 },
      { z: 3.5, x: 0, y: 0 },
      { z: 3, x: 1.5, y: 0 },
    ]) {
      assert.throws(() => planTile(tile, c), RangeError, JSON.stringify(tile));
    }
    for (const maxUnderzoom of [-1, 9, 1.5, Number.NaN]) {
      assert.throws(() => planTile({ z: 0, x: 0, y: 0 }, c, { maxUnderzoom }), RangeError, String(maxUnderzoom));
    }
  });
});

describe('planTile over random ingested assets', () => {
  it('covers exactly the asset part of every nearby tile at every drawable zoom', () => {
    const rand = mulberry32(7);
    for (let i = 0; i < 60; i++) {
      const zoom = 6 + Math.floor(rand() * 17);
      const span = 256 * res(zoom);
      const x = (rand() * 0.8 + 0.1) * WORLD - HALF_WORLD;
      const y = (rand() * 0.8 + 0.1) * WORLD - HALF_WORLD;
      const w = Math.min(rand() ** 2 * 20 * span, WORLD / 50);
      const h = Math.min(rand() ** 2 * 20 * span, WORLD / 50);
      const asset = ingestedAsset({ minX: x, maxX: x + w, minY: y, maxY: y + h }, res(zoom));
      for (let j = 0; j < 10; j++) {
        const z = Math.max(0, asset.minZoom - MAX_UNDERZOOM + Math.floor(rand() * (asset.maxZoom - asset.minZoom + 5)));
        const { x0, x1, y0, y1 } = tileRange(z, asset.bounds, 1);
        const tx = x0 + Math.floor(rand() * (x1 - x0 + 1));
        const ty = y0 + Math.floor(rand() * (y1 - y0 + 1));
        if (tx < 0 || ty < 0 || tx >= 2 ** z || ty >= 2 ** z) continue;
        const layer = planTile({ z, x: tx, y: ty }, [candidate('r', asset)]).layers[0];
        const overlaps = intersectionArea(mapTile(z, tx, ty), asset.bounds) > 0;
        assert.equal(layer !== undefined, overlaps, `asset ${i} z${z}/${tx}/${ty}`);
        if (layer) {
          checkCoversAssetPart(asset, z, tx, ty, layer);
          assert.equal(layer.passThrough, z >= asset.minZoom);
        }
      }
    }
  });
});
