import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PlanMemo } from '../../src/tiles/plan-memo.js';
import type { AssetCandidate } from '../../src/tiles/tile-renderer.js';
import { assetAt, candidate } from './helpers.js';

const asset = {
  ...assetAt(16, 18, 17000, 27000, 1024, 1024),
  type: 'Vert',
  uri: 'file:///a.tif',
  gsd: 0.5,
  kind: 'rgb',
  version: 1,
} as const;

describe('PlanMemo', () => {
  it('gives the same plan for the same tile and candidate list, and a new one for a new list', () => {
    const memo = new PlanMemo(10);
    const tile = { z: 18, x: 17000 * 4 + 1, y: 27000 * 4 + 1 };
    const list = [candidate('a', asset) as AssetCandidate];
    memo.plan(tile, list);
    const first = memo.plan(tile, list);
    assert.equal(first.plan.layers.length, 1);
    assert.equal(memo.plan(tile, list), first, 'remembered from the second request on');
    // The catalogue changed: a new list (here a newer version) must not reuse the old plan.
    const newer = [{ ...candidate('a', asset, 2) } as AssetCandidate];
    memo.plan(tile, newer);
    const second = memo.plan(tile, newer);
    assert.notEqual(second, first);
    assert.notEqual(second.seed, first.seed, 'the ETag seed follows the version');
    assert.equal(memo.plan({ ...tile, x: tile.x + 1 }, list).plan.tile.x, tile.x + 1);
  });

  it('keeps a plan from its second request: a stream of tiles asked for once evicts nothing', () => {
    const memo = new PlanMemo(10);
    const tile = { z: 18, x: 17000 * 4 + 1, y: 27000 * 4 + 1 };
    const list = [candidate('a', asset) as AssetCandidate];
    const once = memo.plan(tile, list);
    const kept = memo.plan(tile, list);
    assert.notEqual(kept, once, 'a tile asked for once is planned, not kept');
    assert.deepEqual(kept.plan, once.plan);
    for (let i = 0; i < 40; i++)
      memo.plan({ ...tile, y: tile.y + 1 + (i % 3), x: tile.x + 1 + Math.floor(i / 3) }, list);
    assert.equal(memo.plan(tile, list), kept, 'forty tiles seen once did not push it out of a memo of ten');
  });
});
