/** RenderedFiles (api/imagery/rendered-files.ts): one render for a file read in pieces, on the service's clock. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RenderedFiles, TTL_MS } from '../../src/api/imagery/rendered-files.js';
import type { RenderResult } from '../../src/raster/index.js';

function result(bytes: number, empty = false): RenderResult {
  return {
    body: Buffer.alloc(bytes),
    contentType: 'image/tiff',
    fileExtension: 'tif',
    grid: undefined as never,
    empty,
    timings: { queueMs: 0, renderMs: 0 },
  };
}

describe('RenderedFiles', () => {
  test('asked at once and again, one render; after the TTL on the clock, another', async () => {
    let now = 1_000_000;
    const files = new RenderedFiles(() => new Date(now));
    let renders = 0;
    const render = async () => {
      renders++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return result(100);
    };
    const [a, b] = await Promise.all([files.get('k', render), files.get('k', render)]);
    assert.equal(a, b);
    await files.get('k', render);
    assert.equal(renders, 1);
    now += TTL_MS + 1;
    await files.get('k', render);
    assert.equal(renders, 2);
    await files.get('other', render);
    assert.equal(renders, 3);
  });

  test("a first asker's failure is not shared; an empty image is not kept; the budget holds", async () => {
    const files = new RenderedFiles(() => new Date(0), 250);
    const first = files.get('k', () => Promise.reject(new Error('the first asker hung up')));
    const second = files.get('k', async () => result(10));
    await assert.rejects(first, /hung up/);
    assert.equal((await second).body.length, 10);
    let renders = 0;
    const empty = async () => {
      renders++;
      return result(10, true);
    };
    await files.get('e', empty);
    await files.get('e', empty);
    assert.equal(renders, 2, 'an empty image is an error answer, rendered again');
    // 200 bytes fit the 250-byte budget once: the next file pushes the first out.
    let big = 0;
    const large = async () => {
      big++;
      return result(200);
    };
    await files.get('a', large);
    await files.get('b', large);
    await files.get('a', large);
    assert.equal(big, 3);
  });
});
