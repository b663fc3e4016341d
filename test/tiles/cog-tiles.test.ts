import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Source } from '@cogeotiff/core';
import { LocalStorage } from '../../src/storage/local-storage.js';
import type { SurveyStorage } from '../../src/storage/storage.js';
import { CogFiles } from '../../src/tiles/cog-files.js';
import { type CogTileAddress, CogTiles, type CogTilesOptions, classifyMask } from '../../src/tiles/cog-tiles.js';
import { WorkGate } from '../../src/tiles/work-gate.js';
import type { DemoTown } from '../support/demo-town.js';
import { demoTown } from '../support/demo-town.js';

/** The demo town's storage, counting the reads that reach its files. */
function countingStorage(dataDir: string): { storage: SurveyStorage; reads: () => number } {
  const local = new LocalStorage(dataDir);
  let reads = 0;
  const storage = {
    source(location: string): Source {
      const source = local.source(location);
      return {
        url: source.url,
        fetch: (offset: number, length?: number) => {
          reads++;
          return source.fetch(offset, length);
        },
        close: () => source.close?.() ?? Promise.resolve(),
      };
    },
  } as unknown as SurveyStorage;
  return { storage, reads: () => reads };
}

const OPTIONS: Omit<CogTilesOptions, 'gate'> = {
  pixelCacheBytes: 0,
  jpegCacheBytes: 8 * 1024 * 1024,
  maskCacheEntries: 1024,
  maskCacheBytes: 1024 * 1024,
};

describe('CogTiles: what is cached from a tile asked for once', () => {
  let town: DemoTown;
  let vert: string;
  /** Tiles of the coarser levels whose mask is partial, and ones whose mask is full. */
  const partial: CogTileAddress[] = [];
  const full: CogTileAddress[] = [];

  before(async () => {
    town = await demoTown();
    const id = town.surveys[0]?.id as string;
    vert = `surveys/${id}/v1/Vert.tif`;
    const files = new CogFiles(new LocalStorage(town.dataDir), 4);
    const scan = new CogTiles(files, { ...OPTIONS, gate: new WorkGate(1) });
    const levels = await files.with(vert, async (cog) => cog.levels.map((level) => level.image.tileCount));
    for (let level = levels.length - 1; level >= 1; level--) {
      const count = levels[level] as { x: number; y: number };
      for (let row = 0; row < count.y; row++)
        for (let col = 0; col < count.x; col++) {
          const address = { uri: vert, level, col, row };
          const { mask } = await scan.masked(address);
          if (mask.kind === 'partial') partial.push(address);
          if (mask.kind === 'full') full.push(address);
        }
    }
    files.close();
    assert.ok(partial.length >= 3 && full.length >= 1, `partial ${partial.length}, full ${full.length} tiles`);
  });

  it('a partial tile: mask and JPEG come in one read, are kept from the second request, then cost no read', async () => {
    const { storage, reads } = countingStorage(town.dataDir);
    const tiles = new CogTiles(new CogFiles(storage, 4), { ...OPTIONS, gate: new WorkGate(1) });
    const address = partial[0] as CogTileAddress;
    await tiles.masked(address); // opens the file
    const opened = reads();

    const second = await tiles.masked(address);
    assert.equal(second.mask.kind, 'partial');
    assert.ok(second.jpeg && second.jpeg[0] === 0xff && second.jpeg[1] === 0xd8, 'the JPEG came with the mask');
    assert.equal(reads() - opened, 1, 'asked for again: read again (one read), and now kept');

    const third = await tiles.masked(address);
    assert.equal(third.mask.kind, 'partial');
    assert.equal(third.jpeg, undefined, 'kept: the JPEG is in the cache, not in this answer');
    assert.deepEqual(await tiles.jpeg(address), second.jpeg);
    assert.equal(reads() - opened, 1, 'the third request read nothing');
  });

  it('tiles asked for once are read each time and push nothing out of the caches', async () => {
    const { storage, reads } = countingStorage(town.dataDir);
    const tiles = new CogTiles(new CogFiles(storage, 4), {
      ...OPTIONS,
      // Room for about one tile: anything admitted would push the kept one out.
      jpegCacheBytes: 128 * 1024,
      maskCacheEntries: 2,
      gate: new WorkGate(1),
    });
    const [kept, ...others] = partial as [CogTileAddress, ...CogTileAddress[]];
    await tiles.masked(kept);
    await tiles.masked(kept);
    const before = reads();
    for (const other of others) {
      const once = await tiles.masked(other);
      assert.ok(once.jpeg, 'the JPEG of a tile seen once is handed over, not cached');
    }
    assert.equal(reads() - before, others.length, 'one read per tile seen once');
    const again = reads();
    const third = await tiles.masked(kept);
    await tiles.jpeg(kept);
    assert.equal(third.mask.kind, 'partial');
    assert.equal(reads() - again, 0, 'the kept tile is still cached');
  });

  it('a full mask is kept at once (a constant); its JPEG from the second request', async () => {
    const { storage, reads } = countingStorage(town.dataDir);
    const tiles = new CogTiles(new CogFiles(storage, 4), { ...OPTIONS, gate: new WorkGate(1) });
    const address = full[0] as CogTileAddress;
    await tiles.masked(partial[0] as CogTileAddress); // opens the file
    const opened = reads();
    const first = await tiles.masked(address);
    assert.equal(first.mask.kind, 'full');
    assert.ok(first.jpeg);
    const second = await tiles.masked(address);
    assert.equal(second.jpeg, undefined, 'the mask came from the cache');
    assert.deepEqual(await tiles.jpeg(address), first.jpeg, 'the JPEG read alone, the second time');
    assert.equal(reads() - opened, 2);
    await tiles.jpeg(address);
    assert.equal(reads() - opened, 2, 'and kept from then on');
  });
});

describe('a tile mask classified', () => {
  const mask = (fill: number, changes: [number, number][] = []) => {
    const bits = new Uint8Array(32 * 256).fill(fill);
    for (const [at, value] of changes) bits[at] = value;
    return bits;
  };

  it('full only when every pixel is set, empty only when none is, partial otherwise', () => {
    assert.equal(classifyMask(mask(0xff)).kind, 'full');
    assert.equal(classifyMask(mask(0)).kind, 'empty');
    // The first byte decides nothing alone: a difference anywhere, the last byte too, is partial.
    for (const changes of [[[0, 0x7f]], [[8191, 0xfe]], [[4000, 0]]] as [number, number][][]) {
      assert.equal(classifyMask(mask(0xff, changes)).kind, 'partial', JSON.stringify(changes));
    }
    for (const changes of [[[0, 1]], [[8191, 0x80]], [[100, 0xff]]] as [number, number][][]) {
      assert.equal(classifyMask(mask(0, changes)).kind, 'partial', JSON.stringify(changes));
    }
    const partial = mask(0x0f);
    const classified = classifyMask(partial);
    assert.ok(classified.kind === 'partial' && classified.bits === partial, 'the bits as given');
  });
});
