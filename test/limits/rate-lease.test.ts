import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeasedRateLimiter, leaseSize, type RequestLease } from '../../src/limits/rate-lease.js';
import { MemoryRateLimiter } from '../../src/limits/rate-limiter.js';

/** A primary's counters behind an asynchronous hop, as across processes. */
function primary(): { request: RequestLease; messages: () => number } {
  const counters = new MemoryRateLimiter();
  let messages = 0;
  return {
    request: async (ask) => {
      messages++;
      await new Promise((resolve) => setImmediate(resolve));
      return counters.grant(ask.key, ask.limit, ask.intervalSeconds, new Date(ask.at), ask.want);
    },
    messages: () => messages,
  };
}

const NOW = new Date(1_800_000_010_000); // 10 s into a minute

describe('LeasedRateLimiter', () => {
  it('two workers together admit exactly a small limit, however their requests interleave', async () => {
    const { request } = primary();
    const workers = [new LeasedRateLimiter(request, 2), new LeasedRateLimiter(request, 2)];
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => (workers[i % 2] as LeasedRateLimiter).take('k', 10, 60, NOW)),
    );
    assert.equal(answers.filter((a) => a.allowed).length, 10);
    const refused = answers.find((a) => !a.allowed);
    assert.deepEqual(refused && [refused.remaining, refused.resetAt, refused.retryAfter], [0, 1_800_000_060, 50]);
  });

  it('a large limit is leased in batches: few messages, never more than the limit, at most a lease short', async () => {
    const { request, messages } = primary();
    const limit = 6400;
    const workers = [new LeasedRateLimiter(request, 2), new LeasedRateLimiter(request, 2)];
    let allowed = 0;
    for (let i = 0; i < 8000; i++)
      if ((await (workers[i % 3 === 0 ? 1 : 0] as LeasedRateLimiter).take('k', limit, 60, NOW)).allowed) allowed++;
    assert.ok(allowed <= limit, `${allowed} admitted`);
    assert.ok(allowed >= limit - leaseSize(limit, 2), `${allowed} admitted`);
    assert.ok(messages() < 200, `${messages()} messages for 8000 requests`);
  });

  it('takeNow decides from the lease in hand and counts nothing when it would have to ask', async () => {
    const { request, messages } = primary();
    const worker = new LeasedRateLimiter(request, 1);
    assert.equal(worker.takeNow('k', 64, 60, NOW), undefined, 'no lease yet');
    assert.equal(messages(), 0);
    assert.equal((await worker.take('k', 64, 60, NOW)).remaining, 63);
    assert.deepEqual(worker.takeNow('k', 64, 60, NOW), {
      allowed: true,
      limit: 64,
      remaining: 62,
      resetAt: 1_800_000_060,
      retryAfter: 50,
    });
    assert.equal((await worker.take('k', 64, 60, NOW)).remaining, 61, 'takeNow counted one');
  });

  it('a new window starts a new lease', async () => {
    const { request } = primary();
    const worker = new LeasedRateLimiter(request, 2);
    assert.equal((await worker.take('k', 1, 60, NOW)).allowed, true);
    assert.equal((await worker.take('k', 1, 60, NOW)).allowed, false);
    assert.equal((await worker.take('k', 1, 60, new Date(NOW.getTime() + 60_000))).allowed, true);
  });

  it('X-RateLimit-Remaining counts down across leases', async () => {
    const { request } = primary();
    const worker = new LeasedRateLimiter(request, 1);
    const remaining = [];
    for (let i = 0; i < 5; i++) remaining.push((await worker.take('k', 5, 60, NOW)).remaining);
    assert.deepEqual(remaining, [4, 3, 2, 1, 0]);
  });
});

describe('LeasedRateLimiter asks for the next lease early', () => {
  it('a steady stream of takeNow calls is decided at once, the primary answering between turns', async () => {
    const { request, messages } = primary();
    const limit = 64_000;
    const worker = new LeasedRateLimiter(request, 1);
    await worker.take('k', limit, 60, NOW);
    let undecided = 0;
    let allowed = 1;
    // 40 turns of 100 requests: four leases' worth, never waiting for one.
    for (let turn = 0; turn < 40; turn++) {
      for (let i = 0; i < 100; i++) {
        const decision = worker.takeNow('k', limit, 60, NOW);
        if (decision === undefined) undecided++;
        else if (decision.allowed) allowed++;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(undecided, 0);
    assert.equal(allowed, 4001);
    assert.ok(messages() <= 12, `${messages()} leases for ${allowed} requests`);
    assert.equal((await worker.take('k', limit, 60, NOW)).remaining, limit - 4002, 'the count is exact');
  });
});
