import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  assetFiles,
  filesForBox,
  hasShard,
  partForTile,
  type ShardSet,
  shardPart,
} from '../../src/geo/asset-layout.js';
import { resolutionAtZoom, tileBounds } from '../../src/geo/web-mercator.js';
import { planAssetLayout } from '../../src/ingest/asset-plan.js';

const low = {
  uri: 's/v1/Vert/low.tif',
  bounds: tileBounds({ z: 10, x: 5, y: 5 }),
  width: 512,
  height: 512,
  minZoom: 8,
  maxZoom: 10,
};
const shards: ShardSet = { zoom: 11, prefix: 's/v1/Vert/', tiles: [10, 10, 11, 10, 10, 11], low };
const asset = { ...low, maxZoom: 16, shards };

describe('the shard layout', () => {
  test('a shard is found only where the list has it', () => {
    assert.ok(hasShard(shards, 10, 10));
    assert.ok(hasShard(shards, 11, 10));
    assert.ok(hasShard(shards, 10, 11));
    assert.ok(!hasShard(shards, 11, 11));
    assert.ok(!hasShard(shards, 9, 10));
    assert.ok(!hasShard({ tiles: [] }, 0, 0));
  });

  test('a tile at or above the shard zoom is served by the shard under it, below it by the low COG', () => {
    assert.equal(partForTile(shards, 16, { z: 16, x: 10 * 32 + 31, y: 10 * 32 })?.uri, 's/v1/Vert/11/10/10.tif');
    assert.equal(partForTile(shards, 16, { z: 11, x: 11, y: 10 })?.uri, 's/v1/Vert/11/11/10.tif');
    assert.equal(partForTile(shards, 16, { z: 12, x: 23, y: 23 }), undefined, 'no shard 11/11/11');
    assert.equal(partForTile(shards, 16, { z: 10, x: 5, y: 5 }), low);
    const part = shardPart(shards, 16, 10, 11);
    assert.deepEqual(part.bounds, tileBounds({ z: 11, x: 10, y: 11 }));
    assert.equal(part.width, 256 * 32);
  });

  test('GDAL reads the low COG for coarse outputs and the touched shards otherwise', () => {
    const shard = tileBounds({ z: 11, x: 10, y: 10 });
    assert.deepEqual(filesForBox(asset, shard, resolutionAtZoom(10)), [low.uri]);
    const inner = { minX: shard.maxX - 1, minY: shard.minY - 1, maxX: shard.maxX + 1, maxY: shard.minY + 1 };
    assert.deepEqual(filesForBox(asset, inner, resolutionAtZoom(16)).sort(), [
      's/v1/Vert/11/10/10.tif',
      's/v1/Vert/11/10/11.tif',
      's/v1/Vert/11/11/10.tif',
    ]);
    assert.deepEqual(filesForBox({ uri: 'one.tif' }, shard, 1), ['one.tif']);
    assert.equal(assetFiles(asset).length, 4);
  });

  test('ingest shards only what exceeds a shard, and only where sources fall', () => {
    const r = resolutionAtZoom(16);
    const at = (x: number, y: number) => tileBounds({ z: 11, x, y });
    const small = planAssetLayout([
      { mercatorExtent: { ...at(10, 10), maxX: at(10, 10).minX + 1000 * r }, mercatorResolution: r },
    ]);
    assert.equal(small.layout, 'single');
    // Two files: one over shard (10, 10), one over (12, 10); nothing in (11, 10) between them.
    const plan = planAssetLayout([
      { mercatorExtent: at(10, 10), mercatorResolution: r },
      { mercatorExtent: { ...at(12, 10), minX: at(12, 10).minX + 10 }, mercatorResolution: r / 2 },
    ]);
    assert.equal(plan.layout, 'sharded');
    if (plan.layout !== 'sharded') return;
    assert.equal(plan.zoom, 17, 'the finest file decides the native zoom');
    assert.equal(plan.shardZoom, 12);
    assert.equal(plan.shards.length, 4 + 4, 'the four z12 shards under each file');
    assert.ok(
      plan.shards.every((s) => s.x < 22 || s.x > 23),
      'none between the files',
    );
    assert.equal(plan.low.zoom, 11);
    for (const shard of plan.shards) assert.equal(shard.grid.width, 8192);
  });
});
