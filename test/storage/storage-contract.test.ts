/**
 * The SurveyStorage contract, on every implementation: a local folder, an S3-compatible server
 * (npm's s3rver, in its own process) and read-only HTTP (nginx serving a folder, range requests
 * and all). Bytes written are the bytes read, by range and through GDAL; what is missing or
 * refused fails loudly; remote reads of one tile's neighbouring ranges go as one request, and
 * the blocks they fetched serve later reads near them.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import gdal from 'gdal-async';
import { parseConfig, type StorageConfig } from '../../src/config/config.js';
import { BLOCK_BYTES } from '../../src/storage/block-cache.js';
import { HttpStorage } from '../../src/storage/http-storage.js';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { gdalStorageSettings, openStorage } from '../../src/storage/open-storage.js';
import type { RangeReader } from '../../src/storage/range-reader.js';
import type { SurveyStorage } from '../../src/storage/storage.js';
import { REALDATA, SKIP_REALDATA } from '../support/fixtures.js';
import { freePort, type NginxServer, type S3Server, SKIP_NGINX, startNginx, startS3 } from '../support/servers.js';

const COG = join(REALDATA, 'rio-tiler', 'cog_rgb.tif');
const KEY = 'surveys/contract/v1/Vert.tif';

interface Implementation {
  name: string;
  skip: string | false;
  /** The storage, with `KEY` holding a copy of COG and `surveys/contract/v1/bytes.bin` holding `bytes`. */
  open(bytes: Buffer): Promise<{ storage: SurveyStorage; config: StorageConfig; remote: boolean }>;
  stop(): Promise<void>;
}

function localImplementation(): Implementation {
  let dir = '';
  return {
    name: 'local folder',
    skip: SKIP_REALDATA,
    async open(bytes) {
      dir = await mkdtemp(join(tmpdir(), 'nadir-storage-'));
      const storage = await openStorage({ kind: 'local', root: dir });
      await putBoth(storage, bytes, dir);
      return { storage, config: { kind: 'local', root: dir }, remote: false };
    },
    stop: () => rm(dir, { recursive: true, force: true }),
  };
}

function s3Implementation(): Implementation {
  let server: S3Server | undefined;
  let scratch = '';
  return {
    name: 'S3 (s3rver)',
    skip: SKIP_REALDATA,
    async open(bytes) {
      server = await startS3('imagery');
      scratch = await mkdtemp(join(tmpdir(), 'nadir-storage-'));
      const config = parseConfig({ ...server.env, NADIR_STORAGE: 's3://imagery/nadir-test' }, scratch).storage;
      // Signed reads, as the service opens its storage (composition.ts).
      const storage = await openStorage(config, { signingTime: () => new Date() });
      await putBoth(storage, bytes, scratch);
      return { storage, config, remote: true };
    },
    async stop() {
      await server?.stop();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

function httpImplementation(): Implementation {
  let nginx: NginxServer | undefined;
  let dir = '';
  return {
    name: 'read-only HTTP (nginx)',
    skip: SKIP_REALDATA || SKIP_NGINX,
    async open(bytes) {
      dir = await mkdtemp(join(tmpdir(), 'nadir-storage-'));
      await putBoth(new LocalStorage(dir), bytes, dir);
      const port = await freePort();
      nginx = await startNginx(`server { listen 127.0.0.1:${port}; root ${dir}; }`, port);
      const config = parseConfig({ NADIR_STORAGE: `${nginx.url}/` }, dir).storage;
      return { storage: await openStorage(config), config, remote: true };
    },
    async stop() {
      await nginx?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The COG and a file of known bytes, put from staging copies (put moves its file). */
async function putBoth(storage: SurveyStorage, bytes: Buffer, scratch: string): Promise<void> {
  const staged = join(scratch, `staged-${randomBytes(4).toString('hex')}`);
  await writeFile(`${staged}.bin`, bytes);
  await gdal
    .translateAsync(`${staged}.tif`, await gdal.openAsync(COG), ['-of', 'COG', '-co', 'COMPRESS=JPEG'])
    .then((ds) => ds.close());
  await storage.put('surveys/contract/v1/bytes.bin', `${staged}.bin`);
  await storage.put(KEY, `${staged}.tif`);
}

for (const implementation of [localImplementation(), s3Implementation(), httpImplementation()]) {
  describe(`SurveyStorage contract: ${implementation.name}`, { skip: implementation.skip }, () => {
    const bytes = randomBytes(1_000_000);
    let storage: SurveyStorage;
    let config: StorageConfig;
    let remote: boolean;

    before(async () => {
      ({ storage, config, remote } = await implementation.open(bytes));
      for (const [name, value] of Object.entries(gdalStorageSettings(config))) gdal.config.set(name, value);
    });
    after(async () => {
      await storage?.close();
      await implementation.stop();
    });

    it('reads back exactly the bytes put, by range', async () => {
      const source = storage.source('surveys/contract/v1/bytes.bin');
      const ranges: [number, number][] = [
        [0, 16],
        [123_456, 1_000],
        [999_990, 10],
      ];
      for (const [offset, length] of ranges) {
        const read = Buffer.from(await source.fetch(offset, length));
        assert.ok(read.equals(bytes.subarray(offset, offset + length)), `${offset}+${length}`);
      }
    });

    it('GDAL opens the same file through the path the storage names', async () => {
      const ds = await gdal.openAsync(storage.gdalPath(KEY));
      const local = await gdal.openAsync(COG);
      assert.deepEqual([ds.rasterSize.x, ds.rasterSize.y], [local.rasterSize.x, local.rasterSize.y]);
      assert.deepEqual(ds.geoTransform, local.geoTransform);
      const window = await ds.bands.get(1).pixels.readAsync(100, 100, 32, 32);
      assert.ok(
        window.some((value) => value > 0),
        'real pixels, not an empty answer',
      );
      ds.close();
      local.close();
    });

    it('a missing file fails the read loudly (never an empty answer)', async () => {
      await assert.rejects(storage.source('surveys/contract/v9/missing.tif').fetch(0, 100));
      await assert.rejects(gdal.openAsync(storage.gdalPath('surveys/contract/v9/missing.tif')));
    });

    it('a location is its key; an absolute URI under the root maps back to it', () => {
      assert.equal(storage.keyOf(KEY), KEY);
      assert.equal(storage.keyOf('s3://another-bucket/surveys/x/v1/Vert.tif'), undefined);
    });

    /** A storage of its own on the same store: its own blocks held, its own requests counted. */
    async function fresh(): Promise<{ storage: SurveyStorage; requests: () => number }> {
      const own = await openStorage(config, { signingTime: () => new Date() });
      const statistics = (own as unknown as { statistics: { requests: number } }).statistics;
      return { storage: own, requests: () => statistics.requests };
    }

    it('reads of one tile asked for together are one request, the same range once', async (t) => {
      if (!remote) return t.skip('a local file is read with pread, no requests to count');
      const { storage: own, requests } = await fresh();
      const source = own.source('surveys/contract/v1/bytes.bin') as RangeReader;
      const [a, b, c, again] = await Promise.all([
        source.read(1_000, 500),
        source.read(1_600, 400), // 100 bytes after the first: merged
        source.read(900_000, 100), // far away: its own request
        source.read(1_000, 500), // the same as the first: shared
      ]);
      assert.equal(requests(), 2);
      assert.ok(a.equals(bytes.subarray(1_000, 1_500)) && again.equals(a));
      assert.ok(b.equals(bytes.subarray(1_600, 2_000)));
      assert.ok(c.equals(bytes.subarray(900_000, 900_100)));
      await own.close();
    });

    it('a block read once serves the reads near it from memory, to the end of the file', async (t) => {
      if (!remote) return t.skip('a local file is read with pread, no requests to count');
      const { storage: own, requests } = await fresh();
      const source = own.source('surveys/contract/v1/bytes.bin');
      const read = async (offset: number, length: number) =>
        assert.ok(Buffer.from(await source.fetch(offset, length)).equals(bytes.subarray(offset, offset + length)));
      await read(1_000, 500);
      assert.equal(requests(), 1);
      // All in the aligned block the first read fetched (BLOCK_BYTES, block-cache.ts).
      await read(40_000, 25_000);
      await read(100, 30_000);
      await read(BLOCK_BYTES - 11_000, 11_000);
      assert.equal(requests(), 1, 'held since the first read');
      // From the last block, short of a whole one, across the one before it: one request; then held.
      const end = bytes.length;
      const last = Math.floor((end - 1) / BLOCK_BYTES) * BLOCK_BYTES;
      await read(last - 5_000, end - last + 5_000);
      await read(last - 100, 10);
      await read(end - 1_000, 1_000);
      assert.equal(requests(), 2);
      await own.close();
    });

    if (implementation.name !== 'read-only HTTP (nginx)') {
      it('lists what it holds and deletes it (a folder left empty goes too)', async () => {
        const listed = [];
        for await (const object of storage.list('surveys/contract/')) listed.push(object);
        assert.deepEqual(listed.map((o) => o.key).sort(), [
          'surveys/contract/v1/Vert.tif',
          'surveys/contract/v1/bytes.bin',
        ]);
        assert.equal(listed.find((o) => o.key.endsWith('.bin'))?.size, bytes.length);
        await storage.delete(['surveys/contract/v1/bytes.bin', KEY]);
        const left = [];
        for await (const object of storage.list('surveys/')) left.push(object.key);
        assert.deepEqual(left, []);
        if (config.kind === 'local') assert.deepEqual(await readdir(join(config.root, 'surveys')), []);
      });
    } else {
      it('refuses writes: it is read-only', async () => {
        assert.equal(storage.writable, false);
        await assert.rejects(storage.put(KEY, COG), /read-only/);
        assert.ok(storage instanceof HttpStorage);
      });
    }
  });
}

describe('SurveyStorage start-up checks', { skip: SKIP_REALDATA }, () => {
  let server: S3Server;
  before(async () => {
    server = await startS3('imagery');
  });
  after(() => server.stop());

  it('bad credentials, a missing bucket, no server or a cache larger than the machine: one clear line at start', async () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ ...server.env, AWS_SECRET_ACCESS_KEY: 'wrong' }, /Cannot reach the survey storage at s3:\/\/imagery/],
      [
        { ...server.env, NADIR_STORAGE: 's3://no-such-bucket/x' },
        /Cannot reach the survey storage at s3:\/\/no-such-bucket/,
      ],
      [{ ...server.env, NADIR_S3_ENDPOINT: `http://127.0.0.1:${server.port + 1}` }, /Cannot reach the survey storage/],
      // The block cache takes its budget at start: more than the machine has is refused then.
      [
        { ...server.env, NADIR_STORAGE_CACHE_MB: `${Math.ceil(totalmem() / 1024 / 1024) + 1}` },
        /NADIR_STORAGE_CACHE_MB=\d+ is more memory than this machine has/,
      ],
    ];
    for (const [env, message] of cases) {
      const config = parseConfig({ NADIR_STORAGE: 's3://imagery/x', ...env }, tmpdir()).storage;
      await assert.rejects(openStorage(config), (error: Error) => {
        assert.match(error.message, message);
        assert.ok(!error.message.includes('wrong') && !error.message.includes('S3RVER'), 'no secret in it');
        return true;
      });
    }
  });
});
