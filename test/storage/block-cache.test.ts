/**
 * Remote reads through the block cache (range-reader.ts, block-cache.ts): whatever the ranges, the
 * bytes are the file's; a block fetched once serves every later read inside it with no request;
 * the memory held stays within its budget, and is the memory the cache took once. The store here is the RangeFetch seam over a buffer,
 * counting what reaches it; the storage contract runs the same reads against s3rver and nginx.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { BlockCache } from '../../src/storage/block-cache.js';
import {
  type RangeFetch,
  type RangePartsFetch,
  RangeReader,
  type RangeStatistics,
} from '../../src/storage/range-reader.js';

const FILE = randomBytes(10_000);
const BLOCK = 1_000;

/**
 * A store holding FILE that answers ranges as S3 does (a range past the end gets what is there),
 * each answer in memory of its own, as a body read off a socket is.
 */
function store(log: [number, number | undefined][] = []): RangeFetch {
  return async (offset, length) => {
    log.push([offset, length]);
    const bytes = FILE.subarray(offset, length === undefined ? undefined : offset + length);
    const answer = Buffer.allocUnsafeSlow(bytes.byteLength);
    bytes.copy(answer);
    return answer;
  };
}

function reader(fetch: RangeFetch, cache = new BlockCache(1024 * 1024, BLOCK)) {
  const statistics: RangeStatistics = { requests: 0, bytes: 0 };
  return { source: new RangeReader(new URL('s3://bucket/f.tif'), fetch, statistics, cache), statistics, cache };
}

describe('remote reads through the block cache', () => {
  it('any range reads the bytes of the file: inside a block, across blocks, up to and past its end', async () => {
    const { source } = reader(store());
    const ranges: [number, number][] = [
      [0, 16],
      [990, 20],
      [1_000, 1_000],
      [2_500, 3_700],
      [9_990, 10],
      [9_990, 100],
      [4_321, 1],
    ];
    let seed = 7;
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    for (let i = 0; i < 200; i++) ranges.push([next(FILE.length), 1 + next(2_500)]);
    // Asked for all at once (shared and merged requests) and then again one by one (held blocks).
    const together = await Promise.all(ranges.map(([offset, length]) => source.read(offset, length)));
    for (const [i, [offset, length]] of ranges.entries()) {
      const expected = FILE.subarray(offset, offset + length);
      assert.ok(together[i]?.equals(expected), `${offset}+${length} asked together`);
      assert.ok((await source.read(offset, length)).equals(expected), `${offset}+${length} asked again`);
      const fetched = Buffer.from(await source.fetch(offset, length));
      assert.ok(fetched.equals(expected), `${offset}+${length} through fetch`);
      const into = Buffer.alloc(length);
      const count = await source.fetchInto(offset, into);
      assert.ok(into.subarray(0, count).equals(expected), `${offset}+${length} through fetchInto`);
    }
  });

  it('a block read once serves the reads inside it with no request; a new block is one request', async () => {
    const log: [number, number | undefined][] = [];
    const { source, statistics } = reader(store(log));
    await source.read(1_200, 300);
    assert.deepEqual(log, [[1_000, 1_000]], 'the whole aligned block, not the 300 bytes');
    await source.read(1_000, 1_000);
    await source.read(1_600, 50);
    assert.equal(statistics.requests, 1, 'reads inside a held block reach no store');
    await source.read(1_900, 200); // half in the held block, half in the next
    assert.deepEqual(log[1], [2_000, 2_000], 'only blocks not held: the next, and one more read ahead');
    const [a, b] = await Promise.all([source.read(5_100, 10), source.read(5_800, 10)]);
    assert.deepEqual(log[2], [5_000, 1_000], 'elsewhere in the file: one block');
    assert.equal(statistics.requests, 3, 'two reads of one block asked together: one request');
    assert.ok(a.equals(FILE.subarray(5_100, 5_110)) && b.equals(FILE.subarray(5_800, 5_810)));
  });

  it('reads ahead on sequential misses, doubling to a cap; a read elsewhere falls back to one block', async () => {
    const log: [number, number | undefined][] = [];
    const big = randomBytes(40 * 1024 * 1024);
    const fetch: RangeFetch = async (offset, length) => {
      log.push([offset, length]);
      return Buffer.from(big.subarray(offset, length === undefined ? undefined : offset + length));
    };
    const blockBytes = 256 * 1024;
    const statistics: RangeStatistics = { requests: 0, bytes: 0 };
    const cache = new BlockCache(64 * 1024 * 1024, blockBytes);
    const source = new RangeReader(new URL('s3://bucket/big.tif'), fetch, statistics, cache);
    // A tile of 30 kB in every block in turn, as a sweep along a COG's rows reads them.
    for (let block = 0; block < 40; block++) {
      const offset = block * blockBytes + 1_000;
      assert.ok((await source.read(offset, 30_000)).equals(big.subarray(offset, offset + 30_000)));
    }
    const runs = log.map(([, length]) => (length as number) / blockBytes);
    assert.deepEqual(runs, [1, 2, 4, 8, 8, 8, 8, 8], 'doubling to 2 MiB a request');
    log.length = 0;
    const blocksOf = () => log.map(([offset, length]) => [offset / blockBytes, (length as number) / blockBytes]);
    await source.read(146 * blockBytes, 10);
    await source.read(144 * blockBytes, 10);
    await source.read(145 * blockBytes, 10);
    assert.deepEqual(
      blocksOf(),
      [
        [146, 1],
        [144, 1],
        [145, 1],
      ],
      'reads elsewhere: a block each; the run after 144 stops before 146, held',
    );
  });

  it('the blocks stay within their memory; a block cut from a larger answer holds only itself', async () => {
    const answers: ArrayBufferLike[] = [];
    const keeping: RangeFetch = async (offset, length) => {
      const answer = await store()(offset, length);
      answers.push(answer.buffer);
      return answer;
    };
    const cache = new BlockCache(4 * BLOCK, BLOCK);
    const { source } = reader(keeping, cache);
    await source.read(0, FILE.length); // one request of ten blocks
    assert.ok(cache.stats.weight <= 4 * BLOCK, `held ${cache.stats.weight} bytes`);
    const held = cache.get('s3://bucket/f.tif', 9);
    assert.ok(held, 'the newest blocks are held');
    assert.ok(!answers.includes(held.buffer), "copied into the cache's memory, not a view of the answer");
    assert.ok(held.equals(FILE.subarray(9_000, 10_000)));
    // Two blocks in one answer: each is copied out of it too.
    const two = reader(keeping, new BlockCache(4 * BLOCK, BLOCK));
    await two.source.read(1_500, 1_000);
    for (const index of [1, 2]) {
      const block = two.cache.get('s3://bucket/f.tif', index);
      assert.ok(
        block && !answers.includes(block.buffer) && block.equals(FILE.subarray(index * BLOCK, (index + 1) * BLOCK)),
      );
    }
  });

  it('blocks come into memory the cache took once: a block pushed out gives its memory to a later one', async () => {
    const big = randomBytes(40 * BLOCK);
    const written: Buffer[] = [];
    const parts: RangePartsFetch = async (offset, length, partBytes, arrived, allocate) => {
      const answer: Buffer[] = [];
      for (let at = offset; at < Math.min(offset + length, big.length); at += partBytes) {
        const bytes = big.subarray(at, Math.min(at + partBytes, big.length));
        const part = allocate ? allocate(bytes.length) : Buffer.allocUnsafeSlow(bytes.length);
        bytes.copy(part);
        written.push(part);
        answer.push(part);
        arrived?.(answer.length - 1, part);
      }
      return answer;
    };
    const cache = new BlockCache(8 * BLOCK, BLOCK);
    const statistics: RangeStatistics = { requests: 0, bytes: 0 };
    const source = new RangeReader(new URL('s3://bucket/big.tif'), store(), statistics, cache, parts);
    // Every other block, then the ones between: one block a request (no read-ahead), 40 in all.
    const order = [...Array(20).keys()].map((i) => 2 * i).concat([...Array(20).keys()].map((i) => 2 * i + 1));
    for (const index of order) {
      const offset = index * BLOCK + 10;
      assert.ok((await source.read(offset, 100)).equals(big.subarray(offset, offset + 100)), `block ${index}`);
    }
    assert.equal(written.length, 40);
    const memory = new Set(written.map((part) => `${part.byteOffset}`));
    assert.ok(
      written.every((part) => part.buffer === written[0]?.buffer),
      'every block written into the same memory, none into new memory of its own',
    );
    assert.ok(memory.size <= 8, `40 blocks in ${memory.size} slots of 8`);
    assert.ok(cache.stats.weight <= 8 * BLOCK);
    // Reads asked all at once while blocks are pushed out and their memory taken again: each
    // read's bytes are its own copy, still the file's when the cache has moved on.
    let seed = 3;
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    const ranges = [...Array(300)].map(() => [next(big.length), 1 + next(3 * BLOCK)] as const);
    const intos = ranges.map(([, length]) => Buffer.alloc(length));
    const [together, counts] = await Promise.all([
      Promise.all(ranges.map(([offset, length]) => source.read(offset, length))),
      Promise.all(ranges.map(([offset], i) => source.fetchInto(offset, intos[i] as Buffer))),
    ]);
    for (const [i, [offset, length]] of ranges.entries()) {
      const expected = big.subarray(offset, offset + length);
      assert.ok(together[i]?.equals(expected), `${offset}+${length} read`);
      assert.ok(intos[i]?.subarray(0, counts[i]).equals(expected), `${offset}+${length} fetchInto`);
    }
  });

  it('a read that fails gives back the memory it took: the cache goes on in the memory it has', async () => {
    let failing = false;
    const written: Buffer[] = [];
    const parts: RangePartsFetch = async (offset, length, partBytes, arrived, allocate) => {
      const answer: Buffer[] = [];
      for (let at = offset; at < offset + length; at += partBytes) {
        const part = (allocate as (bytes: number) => Buffer)(partBytes);
        written.push(part);
        // Fails with its first part written into and not yet handed on.
        if (failing) throw new Error('store down');
        FILE.copy(part, 0, at, at + partBytes);
        answer.push(part);
        arrived?.(answer.length - 1, part);
      }
      return answer;
    };
    const cache = new BlockCache(2 * BLOCK, BLOCK);
    const source = new RangeReader(new URL('s3://bucket/f.tif'), store(), { requests: 0, bytes: 0 }, cache, parts);
    failing = true;
    for (const index of [0, 2, 4, 6]) await assert.rejects(source.read(index * BLOCK, 10), /store down/);
    failing = false;
    for (const index of [1, 3, 5, 7, 9]) {
      assert.ok((await source.read(index * BLOCK, 10)).equals(FILE.subarray(index * BLOCK, index * BLOCK + 10)));
    }
    assert.ok(
      written.every((part) => part.buffer === written[0]?.buffer),
      'the failed reads left both slots to the reads after them',
    );
  });

  it('a failed read fails every reader of the block and is not remembered: the next read asks again', async () => {
    let failing = true;
    const fetch: RangeFetch = async (offset, length) => {
      if (failing) throw new Error('store down');
      return store()(offset, length);
    };
    const { source, statistics } = reader(fetch);
    const results = await Promise.allSettled([source.read(3_100, 10), source.read(3_500, 10)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    failing = false;
    assert.ok((await source.read(3_100, 10)).equals(FILE.subarray(3_100, 3_110)));
    assert.equal(statistics.requests, 2);
  });

  it('a store that answers in blocks: the same bytes, each block held as the store sent it, no copy', async () => {
    const sent: Buffer[] = [];
    const log: [number, number][] = [];
    const parts: RangePartsFetch = async (offset, length, partBytes) => {
      log.push([offset, length]);
      const bytes = FILE.subarray(offset, offset + length);
      const answer: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += partBytes) {
        const part = Buffer.allocUnsafeSlow(Math.min(partBytes, bytes.length - at));
        bytes.copy(part, 0, at, at + part.length);
        answer.push(part);
      }
      sent.push(...answer);
      return answer;
    };
    const wholeReads: number[] = [];
    const cache = new BlockCache(1024 * 1024, BLOCK);
    const statistics: RangeStatistics = { requests: 0, bytes: 0 };
    const source = new RangeReader(
      new URL('s3://bucket/f.tif'),
      async (offset, length) => {
        wholeReads.push(offset);
        return store()(offset, length);
      },
      statistics,
      cache,
      parts,
    );
    let seed = 11;
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    for (let i = 0; i < 100; i++) {
      const offset = next(FILE.length);
      const length = 1 + next(2_500);
      const expected = FILE.subarray(offset, offset + length);
      assert.ok((await source.read(offset, length)).equals(expected), `${offset}+${length}`);
    }
    assert.deepEqual(wholeReads, [], 'block runs all came in parts');
    assert.ok(log.length > 0 && log.every(([offset, length]) => offset % BLOCK === 0 && length % BLOCK === 0));
    for (let index = 0; index < 10; index++) {
      const held = cache.get('s3://bucket/f.tif', index);
      if (held) assert.ok(sent.includes(held), `block ${index} is the buffer the store sent`);
    }
    assert.equal(
      statistics.bytes,
      sent.reduce((sum, part) => sum + part.length, 0),
    );
  });

  it('a failed read-ahead leaves no unhandled rejection for the blocks nobody asked for', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      let failing = false;
      const fetch: RangeFetch = async (offset, length) => {
        if (failing) throw new Error('store down');
        return store()(offset, length);
      };
      const { source } = reader(fetch);
      await source.read(1_000, 10);
      failing = true;
      // Block 2 follows the run of block 1: a run of two, of which only block 2 is asked for.
      await assert.rejects(source.read(2_000, 10), /store down/);
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(unhandled, []);
      failing = false;
      assert.ok((await source.read(3_100, 10)).equals(FILE.subarray(3_100, 3_110)), 'block 3 is asked again');
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it('a block of a run goes to its readers when it has come, before the rest of the run', async () => {
    // The store sends the first block of an answer, then holds the rest until the gate opens.
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const parts: RangePartsFetch = async (offset, length, partBytes, arrived) => {
      const answer: Buffer[] = [];
      for (let at = offset; at < offset + length; at += partBytes) {
        if (at > offset) await gate;
        const part = Buffer.from(FILE.subarray(at, at + partBytes));
        answer.push(part);
        arrived?.(answer.length - 1, part);
      }
      return answer;
    };
    const statistics: RangeStatistics = { requests: 0, bytes: 0 };
    const cache = new BlockCache(1024 * 1024, BLOCK);
    const source = new RangeReader(new URL('s3://bucket/f.tif'), store(), statistics, cache, parts);
    // Blocks 1 and 2 asked for in one turn: one request, its parts in that order.
    const firstRead = source.read(BLOCK + 5, 10);
    let lastCame = false;
    const last = source.read(2 * BLOCK + 5, 10).then((bytes) => {
      lastCame = true;
      return bytes;
    });
    const first = await firstRead;
    assert.ok(first.equals(FILE.subarray(BLOCK + 5, BLOCK + 15)));
    assert.equal(statistics.requests, 1, 'blocks 1 and 2 are one request');
    assert.ok(cache.has('s3://bucket/f.tif', 1), 'block 1 is held as it comes');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lastCame, false, 'block 2 is still on its way');
    open();
    assert.ok((await last).equals(FILE.subarray(2 * BLOCK + 5, 2 * BLOCK + 15)));
  });
});
