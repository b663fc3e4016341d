import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { CogFiles } from '../../src/tiles/cog-files.js';
import { WorkGate } from '../../src/tiles/work-gate.js';
import { REALDATA, SKIP_REALDATA } from '../support/fixtures.js';

const COG = pathToFileURL(join(REALDATA, 'rio-tiler', 'cog_rgb.tif')).href;
const OTHER = pathToFileURL(join(REALDATA, 'rio-tiler', 'pix4d_alpha_nodata.tif')).href;

describe('CogFiles', { skip: SKIP_REALDATA }, () => {
  it('reads a tile of a real COG, with the JPEG tables merged into a JPEG of its own', async () => {
    const files = new CogFiles(new LocalStorage(REALDATA), 4);
    const tile = await files.with(COG, (cog) => (cog.levels[0] as (typeof cog.levels)[0]).image.getTile(0, 0));
    assert.ok(tile);
    const bytes = Buffer.from(tile.bytes);
    assert.deepEqual([...bytes.subarray(0, 2)], [0xff, 0xd8], 'starts with SOI');
    assert.deepEqual([...bytes.subarray(-2)], [0xff, 0xd9], 'ends with EOI');
    files.close();
  });

  it('a file pushed out of the cache while a read runs stays open until that read is done', async () => {
    const files = new CogFiles(new LocalStorage(REALDATA), 1);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = files.with(COG, async (cog) => {
      await held;
      return cog.levels[0]?.image.getTile(0, 0);
    });
    await files.with(OTHER, async () => undefined); // evicts COG while `slow` still uses it
    assert.equal(files.openCount, 1);
    release();
    assert.ok(await slow, 'the read after eviction still succeeded');
    // And the evicted file opens again when asked for.
    assert.ok(await files.with(COG, async (cog) => cog.levels[0]?.image.getTile(0, 0)));
    files.close();
  });

  it('a file that cannot be opened is STORAGE_UNAVAILABLE, and is not cached as one', async () => {
    const files = new CogFiles(new LocalStorage(REALDATA), 4);
    await assert.rejects(
      files.with('file:///nonexistent/x.tif', async () => 1),
      (error: Error) => {
        assert.equal((error as { code?: string }).code, 'STORAGE_UNAVAILABLE', 'a 503, not a 500');
        assert.match(String((error.cause as Error).message), /ENOENT/);
        return true;
      },
    );
    assert.equal(files.openCount, 0);
    files.close();
  });
});

describe('WorkGate', () => {
  it('runs at most `slots` tasks at once, and the waiting ones in arrival order', async () => {
    const gate = new WorkGate(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        gate.run(async () => {
          running++;
          most = Math.max(most, running);
          await new Promise((resolve) => setTimeout(resolve, 5));
          order.push(i);
          running--;
        }),
      ),
    );
    assert.equal(most, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('a failing task frees its slot', async () => {
    const gate = new WorkGate(1);
    await assert.rejects(
      gate.run(async () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await gate.run(async () => 42), 42);
  });
});
