import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../../src/limits/rate-limiter.js';

describe('MemoryRateLimiter', () => {
  it('allows `limit` requests per fixed window aligned to the epoch, then refuses until the reset', async () => {
    const limiter = new MemoryRateLimiter();
    const at = (seconds: number) => new Date(seconds * 1000);
    const start = 1_800_000_000; // a multiple of 60
    const first = await limiter.take('k', 3, 60, at(start + 10));
    assert.deepEqual(first, { allowed: true, limit: 3, remaining: 2, resetAt: start + 60, retryAfter: 50 });
    assert.equal((await limiter.take('k', 3, 60, at(start + 11))).remaining, 1);
    assert.equal((await limiter.take('k', 3, 60, at(start + 12))).remaining, 0);
    const refused = await limiter.take('k', 3, 60, at(start + 30.5));
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.equal(refused.retryAfter, 30);
    assert.equal((await limiter.take('other', 3, 60, at(start + 31))).allowed, true, 'keys count separately');
    const next = await limiter.take('k', 3, 60, at(start + 60));
    assert.deepEqual([next.allowed, next.remaining, next.resetAt], [true, 2, start + 120]);
  });

  it('forgets ended windows instead of growing without bound', async () => {
    const limiter = new MemoryRateLimiter(100);
    for (let i = 0; i < 1000; i++) await limiter.take(`key-${i}`, 1, 1, new Date(i * 1000));
    // Every window but the newest has ended; a sweep ran each time the map reached 100.
    const fresh = await limiter.take('key-999', 1, 1, new Date(999_500));
    assert.equal(fresh.allowed, false, 'the current window of a key is kept');
  });
});
