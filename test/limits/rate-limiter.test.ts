import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../../src/limits/rate-limiter.js';

describe('MemoryRateLimiter', () => {
  it('forgets ended windows instead of growing without bound', async () => {
    const limiter = new MemoryRateLimiter(100);
    for (let i = 0; i < 1000; i++) await limiter.take(`key-${i}`, 1, 1, new Date(i * 1000));
    // Every window but the newest has ended; a sweep ran each time the map reached 100.
    assert.ok(limiter.size <= 100, `${limiter.size} windows held`);
    const fresh = await limiter.take('key-999', 1, 1, new Date(999_500));
    assert.equal(fresh.allowed, false, 'the current window of a key is kept');
  });

  it('counts a key in several intervals, and sweeps them all', async () => {
    const limiter = new MemoryRateLimiter(10);
    for (let i = 0; i < 50; i++) {
      for (const interval of [1, 60, 3600]) await limiter.take(`key-${i}`, 5, interval, new Date(i * 1000));
    }
    // At 50 s, the 60 s and 3600 s windows of every key are still running; the 1 s ones have ended.
    assert.equal(limiter.size, 101);
    const hour = await limiter.take('key-0', 5, 3600, new Date(50_000));
    assert.deepEqual([hour.allowed, hour.remaining], [true, 3], 'key-0 in its hour: its second request');
    const second = await limiter.take('key-0', 5, 1, new Date(50_000));
    assert.deepEqual([second.allowed, second.remaining], [true, 4], 'key-0 in a new second');
  });
});
