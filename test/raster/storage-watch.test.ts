/**
 * The storage deadline of raster renders (raster/storage-watch.ts) on a clock the test moves: a
 * store that stops answering fails the renders in flight after the timeout, not GDAL's sum of
 * timeouts; the breaker refuses renders at once and lets one probe through; a store that answers
 * with an error is not a hung store; and the classification of probe errors.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isNadirError, type NadirError } from '../../src/errors.js';
import { isNoAnswer, ProbeTimeout, StorageWatch, type Timers } from '../../src/raster/storage-watch.js';

/** Timers on a clock that only moves when the test says. */
function manualTimers(): Timers & { advance(ms: number): Promise<void>; pending(): number } {
  let now = 0;
  let next = 0;
  const due = new Map<number, { at: number; callback: () => void }>();
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return {
    now: () => now,
    setTimeout(callback, ms) {
      next++;
      due.set(next, { at: now + ms, callback });
      return next;
    },
    clearTimeout(handle) {
      due.delete(handle as number);
    },
    pending: () => due.size,
    async advance(ms) {
      const target = now + ms;
      await settle();
      for (;;) {
        const [id, first] = [...due.entries()].sort((a, b) => a[1].at - b[1].at)[0] ?? [];
        if (id === undefined || !first || first.at > target) break;
        due.delete(id);
        now = first.at;
        first.callback();
        await settle();
      }
      now = target;
      await settle();
    },
  };
}

/** A store whose probes the test answers: each probe waits until `answer` or `fail` settles it. */
function fakeStore() {
  const waiting: { location: string; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  let mode: 'answer' | 'hang' | { fail: unknown } = 'answer';
  return {
    probes: 0,
    waiting,
    set(next: typeof mode) {
      mode = next;
    },
    probe(location: string): Promise<unknown> {
      this.probes++;
      if (mode === 'answer') return Promise.resolve(Buffer.alloc(1));
      if (mode === 'hang') return new Promise((resolve, reject) => waiting.push({ location, resolve, reject }));
      return Promise.reject(mode.fail);
    },
  };
}

function settledState<T>(promise: Promise<T>) {
  const state: { value?: T; error?: unknown; done: boolean } = { done: false };
  promise.then(
    (value) => Object.assign(state, { value, done: true }),
    (error: unknown) => Object.assign(state, { error, done: true }),
  );
  return state;
}

function assertUnavailable(error: unknown, mentions: string): asserts error is NadirError {
  assert.ok(isNadirError(error), String(error));
  assert.equal(error.code, 'STORAGE_UNAVAILABLE');
  assert.ok((error.details.retryAfter as number) >= 1);
  const cause = (error as Error).cause as Error;
  assert.match(cause.message, new RegExp(mentions), 'the log gets the real cause');
}

describe('storage watch', () => {
  test('a store that stops answering fails the renders in flight after the timeout; their work goes on', async () => {
    const timers = manualTimers();
    const store = fakeStore();
    const watch = new StorageWatch({ probe: (l) => store.probe(l), timeoutMs: 3_000, timers });
    assert.equal(watch.intervalMs, 750, 'a quarter of the timeout');
    let finishWork!: (value: string) => void;
    const work = new Promise<string>((resolve) => {
      finishWork = resolve;
    });
    const first = settledState(watch.guard(work, ['surveys/a.tif']));
    const second = settledState(watch.guard(work, ['surveys/a.tif', 'surveys/b.tif']));
    await timers.advance(0);
    assert.equal(store.probes, 2, 'one probe per file, shared by both renders');
    // The store stops answering after the first round.
    store.set('hang');
    await timers.advance(750);
    assert.equal(store.probes, 4);
    await timers.advance(2_999);
    assert.ok(!first.done && !second.done, 'still within the timeout');
    await timers.advance(1);
    assert.ok(first.done && second.done, 'both answered at the timeout');
    assertUnavailable(first.error, 'did not answer a 1-byte read of surveys/a.tif within 3000 ms');
    assertUnavailable(second.error, 'within 3000 ms');
    assert.equal(watch.state, 'down');
    assert.equal(watch.abandoned, 2);
    // The work itself ends later: nothing is left waiting on it and no timers are left running.
    finishWork('late');
    await timers.advance(10_000);
    assert.equal(timers.pending(), 0);
  });

  test('while the store does not answer, renders are refused at once; one probes it after the interval; back when it answers', async () => {
    const timers = manualTimers();
    const store = fakeStore();
    const watch = new StorageWatch({ probe: (l) => store.probe(l), timeoutMs: 2_000, intervalMs: 500, timers });
    store.set({ fail: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) });
    const failed = settledState(watch.guard(new Promise(() => {}), ['f.tif']));
    await timers.advance(0);
    assertUnavailable(failed.error, 'ECONNREFUSED');
    assert.equal(watch.state, 'down');

    // Within the interval: refused without a probe.
    const probes = store.probes;
    await assert.rejects(watch.admit(['f.tif']), (error) => {
      assertUnavailable(error, 'ECONNREFUSED');
      return true;
    });
    assert.equal(store.probes, probes);

    // After it: one caller probes (the store hangs now); the others are refused at once meanwhile.
    await timers.advance(500);
    store.set('hang');
    const probing = settledState(watch.admit(['f.tif']));
    await timers.advance(0);
    await assert.rejects(watch.admit(['f.tif']), isNadirError);
    assert.equal(store.probes, probes + 1);
    await timers.advance(2_000);
    assertUnavailable(probing.error, 'within 2000 ms');

    // The store answers again: the next probe after the interval lets the render through.
    store.set('answer');
    await timers.advance(500);
    await watch.admit(['f.tif']);
    assert.equal(watch.state, 'up');
    assert.equal(await watch.guard(Promise.resolve(42), ['f.tif']), 42);
    // A probe that was hanging and answers late changes nothing.
    for (const waiting of store.waiting) waiting.resolve(Buffer.alloc(1));
    await timers.advance(0);
    assert.equal(watch.state, 'up');
  });

  test('a store that answers with an error is not hung: renders go on, and a failed render blames the file', async () => {
    const timers = manualTimers();
    const store = fakeStore();
    const watch = new StorageWatch({ probe: (l) => store.probe(l), timeoutMs: 1_000, timers });
    const missing = Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
    store.set({ fail: missing });
    let finish!: () => void;
    const render = settledState(
      watch.guard(
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
        ['gone.tif'],
      ),
    );
    await timers.advance(5_000);
    assert.ok(!render.done, 'not abandoned for an answer');
    assert.equal(watch.state, 'up');
    finish();
    await timers.advance(0);
    assert.ok(render.done && render.error === undefined);

    const blamed = await watch.blame(['gone.tif'], new Error('TIFFReadEncodedTile() failed'));
    assertUnavailable(blamed, 'TIFFReadEncodedTile\\(\\) failed; storage: NoSuchKey');
    assert.equal(watch.state, 'up', 'the breaker stays closed');
    // The store reads the file fine: the failure is nadir's own.
    store.set('answer');
    assert.equal(await watch.blame(['gone.tif'], new Error('a bug')), undefined);
  });

  test('renders starting within the interval of an answer send no probe of their own (DsmChange map tiles)', async () => {
    const timers = manualTimers();
    const store = fakeStore();
    const watch = new StorageWatch({ probe: (l) => store.probe(l), timeoutMs: 2_000, intervalMs: 500, timers });
    const files = ['after.tif', 'before.tif'];
    for (let tile = 0; tile < 20; tile++) {
      assert.equal(await watch.guard(Promise.resolve(tile), files), tile);
      await timers.advance(20);
    }
    // 400 ms of tiles: the first probed both files; the rest relied on that answer.
    assert.equal(store.probes, 2);
    await timers.advance(100);
    await watch.guard(Promise.resolve(), files);
    assert.equal(store.probes, 4, 'a new probe once the answer is an interval old');
    // A failed render asks afresh, whatever the last answer.
    await timers.advance(0);
    assert.equal(await watch.blame(files, new Error('x')), undefined);
    assert.equal(store.probes, 6);
    assert.equal(timers.pending(), 0);
  });

  test('probe errors: unreachable, timed out and 5xx are no answer; 4xx is an answer', () => {
    const code = (value: string) => Object.assign(new Error(value), { code: value });
    assert.ok(isNoAnswer(new ProbeTimeout('f', 1)));
    assert.ok(isNoAnswer(code('ECONNREFUSED')));
    assert.ok(isNoAnswer(code('ECONNRESET')));
    assert.ok(isNoAnswer(Object.assign(new Error('aborted'), { name: 'AbortError' })));
    assert.ok(isNoAnswer(Object.assign(new Error('t'), { name: 'TimeoutError' })));
    assert.ok(isNoAnswer(new TypeError('fetch failed', { cause: code('ECONNREFUSED') })));
    assert.ok(isNoAnswer(Object.assign(new Error('SlowDown'), { $metadata: { httpStatusCode: 503 } })));
    assert.ok(isNoAnswer(Object.assign(new Error('socket hang up'), { $metadata: {} })));
    assert.ok(!isNoAnswer(Object.assign(new Error('NoSuchKey'), { $metadata: { httpStatusCode: 404 } })));
    assert.ok(!isNoAnswer(Object.assign(new Error('AccessDenied'), { $metadata: { httpStatusCode: 403 } })));
    assert.ok(!isNoAnswer(new Error('https://cdn/x.tif: HTTP 404 to a range request')));
  });
});
