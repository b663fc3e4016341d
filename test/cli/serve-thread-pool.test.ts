/**
 * `nadir serve` runs libuv's thread pool (gdal-async's raster work, file reads, the tile codec)
 * at the size bin/nadir sets, 16 unless UV_THREADPOOL_SIZE says otherwise. The pool reads its
 * size once, when it first starts: bin/nadir as an ES module set it after Node's module loader
 * had started the pool to read the file itself, and one server ran on 4 threads.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { test } from 'node:test';
import { tempDir } from '../support/fixtures.js';
import { startNadirServer } from '../support/nadir-process.js';
import { freePort } from '../support/servers.js';

/** The server's threads: the event loop, V8's helpers and the pool's (all named "node"). */
async function threadsOf(poolSize: string | undefined): Promise<number> {
  const scratch = await tempDir('thread-pool');
  const env: NodeJS.ProcessEnv = {
    NADIR_DATA_DIR: scratch.path,
    NADIR_LOG_LEVEL: 'warn',
    UV_THREADPOOL_SIZE: poolSize,
  };
  // undefined in the spawn environment would be the string "undefined": leave the variable out.
  if (poolSize === undefined) delete env.UV_THREADPOOL_SIZE;
  const saved = process.env.UV_THREADPOOL_SIZE;
  delete process.env.UV_THREADPOOL_SIZE;
  const server = await startNadirServer(env, await freePort()).finally(() => {
    if (saved !== undefined) process.env.UV_THREADPOOL_SIZE = saved;
  });
  try {
    // Answered requests have read files, so the pool has started.
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    return (await readdir(`/proc/${server.child.pid}/task`)).length;
  } finally {
    await server.stop();
    await scratch.remove();
  }
}

test('nadir serve starts 16 pool threads by default, and as many as UV_THREADPOOL_SIZE says', {
  skip: process.platform !== 'linux' && 'counts threads in /proc',
}, async () => {
  const byDefault = await threadsOf(undefined);
  const four = await threadsOf('4');
  const six = await threadsOf('6');
  // Everything but the pool is the same process: the differences are the pools' sizes.
  assert.equal(six - four, 2, `threads: ${four} with 4, ${six} with 6`);
  assert.equal(byDefault - four, 12, `threads: ${byDefault} by default, ${four} with 4`);
});
