import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../../src/limits/rate-limiter.js';

describe('MemoryRateLimiter', () => {
  it('forgets ended windows instead of growing without bound', async () => {
    const limiter = new MemoryRateLimiter(100);
    for (let i = 0; i < 1000; i++) await limiter.take(`key-${i}`, 1, 1, new Date(i * 1000));
    // Every window but the newest has ended; a sweep ran each time the map reached 100.
    const fresh = await limiter.take('key-999', 1, 1, new Date(999_500));
    assert.equal(fresh.allowed, false, 'the current window of a key is kept');
  });
});
