import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type Source, Tiff, TiffTag } from '@cogeotiff/core';
import { LocalStorage } from '../../src/storage/local-storage.js';
import type { SurveyStorage } from '../../src/storage/storage.js';
import { CogFiles } from '../../src/tiles/cog-files.js';
import { WorkGate } from '../../src/tiles/work-gate.js';
import { REALDATA, run, SKIP_REALDATA, tempDir } from '../support/fixtures.js';

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

  it('opens a COG whose offset tables lie past its first read in two reads, with the tables read one by one', async () => {
    const dir = await tempDir('cog-tables-');
    try {
      // 8500 px in 128 px tiles, BigTIFF (8-byte offsets): the full resolution's two tables (4,489
      // tiles) alone are 72 KiB, past the 64 KiB first read. Made from a 100 px raster: quick.
      const small = join(dir.path, 'small.tif');
      const cog = join(dir.path, 'cog.tif');
      const create = '-q -of GTiff -outsize 100 100 -bands 1 -ot Byte -burn 90 -a_srs EPSG:3857 -a_ullr 0 8500 8500 0';
      await run('gdal_create', [...create.split(' '), small]);
      const translate = '-q -of COG -outsize 8500 8500 -co BLOCKSIZE=128 -co COMPRESS=DEFLATE -co BIGTIFF=YES';
      await run('gdal_translate', [...translate.split(' '), small, cog]);
      const local = new LocalStorage(dir.path);
      let reads = 0;
      const counted = (source: Source): Source => ({
        url: source.url,
        fetch: (offset, length) => {
          reads++;
          return source.fetch(offset, length);
        },
      });
      const storage = { source: (uri: string) => counted(local.source(uri)) } as unknown as SurveyStorage;
      const files = new CogFiles(storage, 4);
      const uri = pathToFileURL(cog).href;
      const levels = await files.with(uri, async (opened) => opened.levels);
      assert.equal(reads, 2, 'the header, then every offset table at once');
      assert.ok(levels.length >= 5, `${levels.length} levels`);
      // The same tables as @cogeotiff/core reads them one by one (a read each).
      reads = 0;
      const alone = await Tiff.create(counted(local.source(uri)));
      for (const image of alone.images) {
        await Promise.all([image.fetch(TiffTag.TileOffsets), image.fetch(TiffTag.TileByteCounts)]);
      }
      assert.ok(reads > 5, `${reads} reads table by table`);
      assert.equal(levels.length, alone.images.length, 'no mask IFDs: a level per IFD, in order');
      for (const [i, image] of alone.images.entries()) {
        const merged = (levels[i] as (typeof levels)[number]).image;
        for (const tag of [TiffTag.TileOffsets, TiffTag.TileByteCounts]) {
          assert.deepEqual([...(merged.value(tag) as number[])], [...(image.value(tag) as number[])], `IFD ${i}`);
        }
      }
      files.close();
    } finally {
      await dir.remove();
    }
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
