/** The PMTiles writer read back by the reference reader (the pmtiles package), the MBTiles store, the token file. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PMTiles, type Source, zxyToTileId } from 'pmtiles';
import { FileTokenStore } from '../src/node/file-token-store.js';
import { MbtilesStore } from '../src/node/mbtiles-store.js';
import { tileIdOf, writePmtiles } from '../src/node/pmtiles-writer.js';

function memorySource(bytes: Uint8Array): Source {
  return {
    getKey: () => 'memory',
    getBytes: async (offset: number, length: number) => ({ data: bytes.slice(offset, offset + length).buffer }),
  };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nadir-client-archives-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('PMTiles v3', () => {
  test("tile ids are the reference implementation's", () => {
    for (const [z, x, y] of [
      [0, 0, 0],
      [1, 1, 0],
      [3, 5, 2],
      [12, 1234, 3000],
      [20, 271_000, 430_000],
      [24, 16_777_215, 3],
    ]) {
      assert.equal(
        tileIdOf({ z: z as number, x: x as number, y: y as number }),
        zxyToTileId(z as number, x as number, y as number),
        `${z}/${x}/${y}`,
      );
    }
  });

  for (const count of [3, 20_000]) {
    test(`an archive of ${count} tiles reads back tile for tile${count > 5000 ? ' (leaf directories)' : ''}`, async () => {
      const tiles = Array.from({ length: count }, (_, i) => ({
        tile: { z: 16, x: 1000 + (i % 200), y: 2000 + Math.floor(i / 200) },
        bytes: new TextEncoder().encode(`tile ${i}`),
      }));
      // Through an MBTiles store, as an export writes them: in tile id order, read one at a time.
      const store = new MbtilesStore(join(dir, `source-${count}.mbtiles`));
      for (const { tile, bytes } of tiles) store.put(tile, bytes);
      const path = join(dir, `archive-${count}.pmtiles`);
      const size = await writePmtiles(path, {
        format: 'png',
        bounds: { west: -1, south: -2, east: 3, north: 4 },
        minZoom: 16,
        maxZoom: 16,
        metadata: { name: 'n' },
        tiles: store.tilesInTileIdOrder(),
      });
      store.close();
      const written = await readFile(path);
      assert.equal(written.length, size);
      assert.equal(await stat(`${path}.data`).catch(() => 'gone'), 'gone', 'the data file is removed');
      const archive = new PMTiles(memorySource(new Uint8Array(written)));
      const header = await archive.getHeader();
      assert.equal(header.specVersion, 3);
      assert.equal(header.tileType, 2);
      assert.deepEqual([header.minZoom, header.maxZoom, header.minLon, header.maxLat], [16, 16, -1, 4]);
      assert.equal(header.numAddressedTiles, count);
      assert.deepEqual(await archive.getMetadata(), { name: 'n' });
      for (const i of [0, 1, count - 1, Math.floor(count / 2)]) {
        const { z, x, y } = tiles[i]!.tile;
        const got = await archive.getZxy(z, x, y);
        assert.equal(new TextDecoder().decode(got?.data), `tile ${i}`);
      }
      assert.equal(await archive.getZxy(16, 999, 2000), undefined);
    });
  }

  test('tiles out of tile id order are refused (the archive is clustered)', async () => {
    const tiles = [
      { tileId: 10, bytes: new Uint8Array([1]) },
      { tileId: 5, bytes: new Uint8Array([2]) },
    ];
    const input = { format: 'png' as const, bounds: { west: 0, south: 0, east: 1, north: 1 }, minZoom: 0, maxZoom: 2 };
    await assert.rejects(writePmtiles(join(dir, 'unordered.pmtiles'), { ...input, metadata: {}, tiles }), /ascending/);
  });
});

describe('MBTiles store', () => {
  test('rows are TMS-numbered on disk, XYZ in the API; done and empty tiles survive a reopen', () => {
    const path = join(dir, 'a.mbtiles');
    const store = new MbtilesStore(path);
    store.put({ z: 2, x: 1, y: 0 }, new Uint8Array([7]));
    store.markEmpty({ z: 2, x: 2, y: 2 });
    store.setMetadata({ format: 'png', minzoom: 2 });
    store.close();
    const again = new MbtilesStore(path);
    assert.ok(again.has({ z: 2, x: 1, y: 0 }));
    assert.ok(again.has({ z: 2, x: 2, y: 2 }));
    assert.ok(!again.has({ z: 2, x: 1, y: 1 }));
    assert.deepEqual(
      [...again.tiles()].map((t) => t.tile),
      [{ z: 2, x: 1, y: 0 }],
    );
    assert.equal(again.metadata('minzoom'), '2');
    again.close();
  });
});

describe('FileTokenStore', () => {
  test('keeps tokens across instances, in a file only its owner reads', async () => {
    const path = join(dir, 'tokens.json');
    await new FileTokenStore(path).set('scope-a', { token: 't-a', radius: 50, expiresAt: 123 });
    await new FileTokenStore(path).set('scope-b', { token: 't-b', radius: 20, expiresAt: 456 });
    const store = new FileTokenStore(path);
    assert.deepEqual(await store.get('scope-a'), { token: 't-a', radius: 50, expiresAt: 123 });
    await store.delete('scope-a');
    assert.equal(await store.get('scope-a'), undefined);
    assert.equal((await store.get('scope-b'))?.token, 't-b');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  test('a file that is not a token file is an error, not silently replaced', async () => {
    const path = join(dir, 'not-tokens.json');
    await writeFile(path, 'hello');
    await assert.rejects(new FileTokenStore(path).get('x'), /not a token file/);
    assert.equal(await readFile(path, 'utf8'), 'hello');
  });
});
