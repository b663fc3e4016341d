/**
 * Local reads from the page cache on the event loop (src/native/page-cache-read.ts): the bytes
 * are the file's, a cached range costs no libuv file request, and what is not cached (dropped with
 * dd's nocache) or past the end is still read, the usual way, as is a file system that cannot
 * tell (tmpfs answers RWF_NOWAIT with EOPNOTSUPP).
 */
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { readCached } from '../../src/native/page-cache-read.js';
import { LocalStorage } from '../../src/storage/local-storage.js';

const run = promisify(execFile);
const SIZE = 300_000;

/** What `work` answered, and the async resource types created meanwhile (FSREQPROMISE: a file request on the libuv pool). */
async function resourcesDuring<T>(work: () => Promise<T>): Promise<{ result: T; types: string[] }> {
  const types: string[] = [];
  const hook = createHook({ init: (_id, type) => void types.push(type) }).enable();
  try {
    return { result: await work(), types };
  } finally {
    hook.disable();
  }
}

/** Puts `bytes` under `key` of `storage` the way ingest does (a local file renamed into place). */
async function putBytes(storage: LocalStorage, key: string, bytes: Buffer, scratch: string): Promise<string> {
  const local = join(scratch, `upload-${key.replaceAll('/', '-')}`);
  await writeFile(local, bytes);
  await storage.put(key, local);
  return storage.gdalPath(key);
}

/** Whether the file system under `path` answers RWF_NOWAIT reads (ext4 and xfs do; tmpfs does not). */
async function readsFromCache(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    return readCached(handle.fd, Buffer.alloc(1), 0) !== undefined;
  } finally {
    await handle.close();
  }
}

/** Asks the kernel to drop the file's clean pages (GNU dd: iflag=nocache with count=0). */
async function dropFromPageCache(path: string): Promise<void> {
  await run('dd', [`if=${path}`, 'iflag=nocache', 'count=0', 'status=none']);
}

describe('local reads from the page cache', () => {
  let dir = '';
  let path = '';
  let storage: LocalStorage;
  const bytes = randomBytes(SIZE);
  /** Set in before(): the temporary folder's file system cannot read from the cache alone. */
  const unsupported = { reason: '' };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nadir-page-cache-'));
    storage = new LocalStorage(join(dir, 'store'));
    path = await putBytes(storage, 'surveys/s/v1/bytes.bin', bytes, dir);
    if (!(await readsFromCache(path))) unsupported.reason = `${tmpdir()} is on a file system without RWF_NOWAIT`;
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('readCached copies what the cache holds, stops at the end of the file, and refuses what is not a file and place', async (t) => {
    if (unsupported.reason) return t.skip(unsupported.reason);
    const handle = await open(path, 'r');
    try {
      await handle.read(Buffer.alloc(SIZE), 0, SIZE, 0); // now cached
      const into = Buffer.alloc(50_000);
      assert.equal(readCached(handle.fd, into, 1_000), 50_000);
      assert.deepEqual(into, bytes.subarray(1_000, 51_000));
      const tail = Buffer.alloc(1_000);
      assert.equal(readCached(handle.fd, tail, SIZE - 100), 100);
      assert.deepEqual(tail.subarray(0, 100), bytes.subarray(SIZE - 100));
      assert.throws(() => readCached(-1, into, 0), TypeError);
      assert.throws(() => readCached(handle.fd, into, -5), RangeError);
      assert.throws(() => readCached(handle.fd, new Uint16Array(4) as unknown as Uint8Array, 0), TypeError);
    } finally {
      await handle.close();
    }
  });

  it('a cached range is answered without a file request on the libuv pool', async (t) => {
    if (unsupported.reason) return t.skip(unsupported.reason);
    const source = storage.source('surveys/s/v1/bytes.bin');
    await source.fetch(0, SIZE); // opens the handle and fills the cache
    const { result: got, types } = await resourcesDuring(() => source.fetch(123_456, 40_000));
    assert.deepEqual(Buffer.from(got), bytes.subarray(123_456, 163_456));
    assert.ok(!types.includes('FSREQPROMISE'), `file requests made: ${types.join(', ')}`);
  });

  it('a read of more than 1 MiB goes to the pool even when cached, so the event loop never copies megabytes', async (t) => {
    if (unsupported.reason) return t.skip(unsupported.reason);
    const big = randomBytes(3 * 1024 * 1024);
    await putBytes(storage, 'surveys/s/v1/big.bin', big, dir);
    const source = storage.source('surveys/s/v1/big.bin');
    await source.fetch(0, big.length); // cached now
    const { result: got, types } = await resourcesDuring(() => source.fetch(1_000, 2 * 1024 * 1024));
    assert.deepEqual(Buffer.from(got), big.subarray(1_000, 1_000 + 2 * 1024 * 1024));
    assert.ok(types.includes('FSREQPROMISE'), 'a 2 MiB read went to the pool');
  });

  it('bytes not in the cache, and a range past the end, are read on the pool as before', async (t) => {
    if (unsupported.reason) return t.skip(unsupported.reason);
    const source = storage.source('surveys/s/v1/bytes.bin');
    await source.fetch(0, 1); // opens the handle
    await dropFromPageCache(path);
    const handle = await open(path, 'r');
    try {
      assert.ok((readCached(handle.fd, Buffer.alloc(100_000), 150_000) as number) < 100_000, 'dd dropped the pages');
    } finally {
      await handle.close();
    }
    // Asking for missing pages with RWF_NOWAIT starts the kernel's readahead: drop them again.
    await dropFromPageCache(path);
    const { result: got, types } = await resourcesDuring(() => source.fetch(150_000, 100_000));
    assert.deepEqual(Buffer.from(got), bytes.subarray(150_000, 250_000));
    assert.ok(types.includes('FSREQPROMISE'), 'the uncached part went to the pool');
    const tail = await source.fetch(SIZE - 10, 50);
    assert.deepEqual(Buffer.from(tail), bytes.subarray(SIZE - 10));
  });

  it('a file system that cannot read from the cache alone (tmpfs) is read on the pool, bytes intact', {
    skip: !existsSync('/dev/shm') && 'no /dev/shm (tmpfs) here',
  }, async () => {
    const shm = await mkdtemp('/dev/shm/nadir-page-cache-');
    try {
      const onTmpfs = new LocalStorage(shm);
      const onTmpfsPath = await putBytes(onTmpfs, 'surveys/s/v1/bytes.bin', bytes, dir);
      assert.equal(await readsFromCache(onTmpfsPath), false, 'tmpfs refuses RWF_NOWAIT');
      const source = onTmpfs.source('surveys/s/v1/bytes.bin');
      for (const [offset, length] of [
        [0, 1_000],
        [200_000, 99_000],
        [SIZE - 5, 20],
      ] as const) {
        const got = Buffer.from(await source.fetch(offset, length));
        assert.deepEqual(got, bytes.subarray(offset, Math.min(SIZE, offset + length)));
      }
    } finally {
      await rm(shm, { recursive: true, force: true });
    }
  });
});
