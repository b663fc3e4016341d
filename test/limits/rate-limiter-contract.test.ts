/**
 * The RateLimiter contract, on every implementation: this process's counters, the worker's lease
 * from its primary, and Redis (a real redis-server, started for this file). The same windows, the
 * same X-RateLimit-* figures, exactly `limit` admitted however requests race.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { LeasedRateLimiter } from '../../src/limits/rate-lease.js';
import { MemoryRateLimiter, type RateDecision, type RateLimiter } from '../../src/limits/rate-limiter.js';
import { RedisRateLimiter } from '../../src/limits/redis-rate-limiter.js';
import { type RedisServer, SKIP_REDIS, startRedis } from '../support/servers.js';

const START = 1_800_000_000; // a multiple of 60 (and of 3600)
const at = (seconds: number) => new Date(seconds * 1000);
/** NADIR_REDIS_TIMEOUT_MS's default. */
const TIMEOUT_MS = 50;
const quiet = { unavailable: () => undefined, recovered: () => undefined };

interface Implementation {
  name: string;
  skip: string | false;
  /** A limiter; `shared` ones on the same store count together (Redis: several servers). */
  make(): Promise<RateLimiter>;
  /** How many of a key's requests `takeNow` decides without a round trip. */
  atOnce: 'all' | 'some' | 'none';
}

let redis: RedisServer | undefined;
let keySpace = 0;

const implementations: Implementation[] = [
  { name: 'MemoryRateLimiter', skip: false, make: async () => new MemoryRateLimiter(), atOnce: 'all' },
  {
    name: 'LeasedRateLimiter (one worker)',
    skip: false,
    make: async () => {
      const primary = new MemoryRateLimiter();
      return new LeasedRateLimiter(
        async (ask) => primary.grant(ask.key, ask.limit, ask.intervalSeconds, new Date(ask.at), ask.want),
        1,
      );
    },
    // Those its lease in hand covers; the first, and each when the lease runs dry, wait for the primary.
    atOnce: 'some',
  },
  {
    name: 'RedisRateLimiter',
    skip: SKIP_REDIS,
    make: async () => RedisRateLimiter.connect((redis as RedisServer).url, quiet, TIMEOUT_MS),
    atOnce: 'none',
  },
];

before(async () => {
  if (!SKIP_REDIS) redis = await startRedis();
});
after(() => redis?.stop());

for (const implementation of implementations) {
  describe(`RateLimiter contract: ${implementation.name}`, { skip: implementation.skip }, () => {
    // Every test its own keys: a Redis server outlives one limiter.
    const key = () => `key-${++keySpace}`;

    it('admits `limit` per fixed window aligned to the epoch, then refuses until the reset', async () => {
      const limiter = await implementation.make();
      const k = key();
      assert.deepEqual(await limiter.take(k, 3, 60, at(START + 10)), {
        allowed: true,
        limit: 3,
        remaining: 2,
        resetAt: START + 60,
        retryAfter: 50,
      });
      assert.equal((await limiter.take(k, 3, 60, at(START + 11))).remaining, 1);
      assert.equal((await limiter.take(k, 3, 60, at(START + 12))).remaining, 0);
      const refused = await limiter.take(k, 3, 60, at(START + 30.5));
      assert.deepEqual(refused, { allowed: false, limit: 3, remaining: 0, resetAt: START + 60, retryAfter: 30 });
      const next = await limiter.take(k, 3, 60, at(START + 60));
      assert.deepEqual([next.allowed, next.remaining, next.resetAt], [true, 2, START + 120]);
      await limiter.close();
    });

    it('keys and intervals count separately', async () => {
      const limiter = await implementation.make();
      const [a, b] = [key(), key()];
      assert.equal((await limiter.take(a, 1, 60, at(START))).allowed, true);
      assert.equal((await limiter.take(a, 1, 60, at(START))).allowed, false);
      assert.equal((await limiter.take(b, 1, 60, at(START))).allowed, true, 'another key');
      assert.equal((await limiter.take(a, 1, 3600, at(START))).allowed, true, 'another interval');
      await limiter.close();
    });

    it('takeNow decides in the same windows as take, and counts nothing when it cannot decide', async () => {
      const limiter = await implementation.make();
      const k = key();
      let atOnce = 0;
      const decisions: RateDecision[] = [];
      for (let i = 0; i < 30; i++) {
        const now = limiter.takeNow?.(k, 20, 60, at(START + 5));
        if (now) atOnce++;
        decisions.push(now ?? (await limiter.take(k, 20, 60, at(START + 5))));
      }
      const expected = { all: 30, none: 0 }[implementation.atOnce as 'all' | 'none'];
      if (expected === undefined) assert.ok(atOnce > 0 && atOnce < 30, `${atOnce} decided at once`);
      else assert.equal(atOnce, expected);
      assert.equal(decisions.filter((d) => d.allowed).length, 20, 'exactly the limit, however decided');
      assert.deepEqual(
        decisions.map((d) => d.remaining),
        [...Array.from({ length: 20 }, (_, i) => 19 - i), ...Array(10).fill(0)],
      );
      assert.deepEqual(new Set(decisions.map((d) => d.resetAt)), new Set([START + 60]));
      await limiter.close();
    });

    it('admits exactly the limit when 300 requests race', async () => {
      const limiter = await implementation.make();
      const k = key();
      const decisions = await Promise.all(Array.from({ length: 300 }, () => limiter.take(k, 100, 60, at(START + 5))));
      assert.equal(decisions.filter((d) => d.allowed).length, 100);
      assert.deepEqual(new Set(decisions.filter((d) => !d.allowed).map((d) => d.remaining)), new Set([0]));
      await limiter.close();
    });
  });
}

/** Script calls Redis has run so far (EVALSHA and EVAL): one per command a limiter sent. */
async function scriptCalls(probe: Redis): Promise<number> {
  const stats = await probe.info('commandstats');
  return [...stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('RedisRateLimiter across servers and outages', { skip: SKIP_REDIS }, () => {
  it('two servers share one window: exactly the limit between them', async () => {
    const server = redis as RedisServer;
    const [one, two] = [
      await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS),
      await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS),
    ];
    const k = `shared-${++keySpace}`;
    const decisions = await Promise.all(
      Array.from({ length: 400 }, (_, i) => (i % 2 ? one : two).take(k, 150, 60, at(START + 1))),
    );
    assert.equal(decisions.filter((d) => d.allowed).length, 150);
    await one.close();
    await two.close();
  });

  it('sends the takes of one key that arrive in one turn as one command, each still exactly placed', async () => {
    const server = redis as RedisServer;
    const limiter = await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS);
    const probe = new Redis(server.url);
    const scripted = () => scriptCalls(probe);
    try {
      const k = `batched-${++keySpace}`;
      await limiter.take(k, 1000, 60, at(START)); // loads the script
      const before = await scripted();
      const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.take(k, 150, 60, at(START + 1))));
      assert.equal((await scripted()) - before, 1, 'one script call for 200 takes of one turn');
      // Every take its own place in the count: 149 more allowed after the first, remaining 148 .. 0.
      assert.deepEqual(
        decisions.filter((d) => d.allowed).map((d) => d.remaining),
        Array.from({ length: 149 }, (_, i) => 148 - i),
      );
    } finally {
      probe.disconnect();
      await limiter.close();
    }
  });

  it('far from the limit a take is decided without waiting for Redis, and still counted there', async () => {
    const server = redis as RedisServer;
    const limiter = await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS);
    const probe = new Redis(server.url);
    const k = `local-${++keySpace}`;
    const counter = `nadir:tiles:${k}:60:${START}`;
    try {
      assert.equal(
        (await limiter.take(k, 1000, 60, at(START))).remaining,
        999,
        'the first take waits: nothing known yet',
      );
      const [a, b] = [limiter.take(k, 1000, 60, at(START)), limiter.take(k, 1000, 60, at(START))];
      // Decided within this turn of the event loop, before anything could even be sent to Redis.
      const turn = new Promise((resolve) => setImmediate(() => resolve('a turn later')));
      assert.equal(await Promise.race([b.then(() => 'at once'), turn]), 'at once');
      assert.equal(await probe.get(counter), '1', 'not yet counted in Redis');
      assert.deepEqual([(await a).remaining, (await b).remaining], [998, 997]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await probe.get(counter), '3', 'counted in Redis in the background');
    } finally {
      probe.disconnect();
      await limiter.close();
    }
  });

  it('far from the limit, takes of many turns reach Redis as one command within a moment; close sends what is held', async () => {
    const server = redis as RedisServer;
    const limiter = await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS);
    const probe = new Redis(server.url);
    const scripted = () => scriptCalls(probe);
    const k = `settle-${++keySpace}`;
    const counter = `nadir:tiles:${k}:60:${START}`;
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      await limiter.take(k, 1000, 60, at(START)); // waits: nothing known yet
      const before = await scripted();
      // A map client's trickle: one tile a turn, far from the limit (a quarter of the margin is 25).
      for (let i = 0; i < 10; i++) {
        assert.equal((await limiter.take(k, 1000, 60, at(START))).remaining, 998 - i);
        await nextTurn();
      }
      await new Promise((resolve) => setTimeout(resolve, 80));
      assert.equal((await scripted()) - before, 1, 'one command for ten turns of takes');
      assert.equal(await probe.get(counter), '11');
      // Held when the server stops: close sends them rather than losing them.
      for (let i = 0; i < 3; i++) await limiter.take(k, 1000, 60, at(START));
      await limiter.close();
      assert.equal(await probe.get(counter), '14');
    } finally {
      probe.disconnect();
      await limiter.close();
    }
  });

  it('within two margins of the limit a take decided here reaches Redis in its own turn, not 20 ms later', async () => {
    const server = redis as RedisServer;
    const limiter = await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS);
    const probe = new Redis(server.url);
    const k = `band-${++keySpace}`;
    const counter = `nadir:tiles:${k}:60:${START}`;
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      // To 65 of 100: the margin is 20, so takes up to 80 are decided here, and past 60 nothing waits.
      while ((await limiter.take(k, 100, 60, at(START))).remaining > 35);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await probe.get(counter), '65');
      const take = limiter.take(k, 100, 60, at(START));
      const turn = new Promise((resolve) => setImmediate(() => resolve('a turn later')));
      assert.equal(await Promise.race([take.then(() => 'at once'), turn]), 'at once', 'decided here');
      await nextTurn();
      // Sent on the limiter's connection before this ping, so counted once it is answered.
      await limiter.ping();
      assert.equal(await probe.get(counter), '66', 'counted in Redis within its turn');
    } finally {
      probe.disconnect();
      await limiter.close();
    }
  });

  it('near the limit every take waits for its place: two servers taking in turn admit exactly the limit', async () => {
    const server = redis as RedisServer;
    const [one, two] = [
      await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS),
      await RedisRateLimiter.connect(server.url, quiet, TIMEOUT_MS),
    ];
    const k = `turns-${++keySpace}`;
    let allowed = 0;
    for (let i = 0; i < 160; i++) {
      if ((await (i % 2 ? one : two).take(k, 100, 60, at(START))).allowed) allowed++;
      // As between two requests of a real server: the event loop turns, background counts land.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.equal(allowed, 100);
    await one.close();
    await two.close();
  });

  it('while Redis is down each server counts alone and says so once; shared again when it is back', async () => {
    const server = redis as RedisServer;
    const events: string[] = [];
    const limiter = await RedisRateLimiter.connect(
      server.url,
      {
        unavailable: () => events.push('unavailable'),
        recovered: () => events.push('recovered'),
      },
      TIMEOUT_MS,
    );
    const k = `outage-${++keySpace}`;
    assert.equal((await limiter.take(k, 2, 60, at(START))).remaining, 1, 'counted in Redis');
    await server.pause();
    try {
      const during = [];
      const waited: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        during.push(await limiter.take(k, 2, 60, at(START)));
        waited.push(performance.now() - started);
      }
      // Refused connections fail at once; after the first, takes do not even ask.
      assert.ok(Math.max(...waited) < 50, `${waited.join(', ')} ms`);
      // The process's own counters: a fresh window of 2 here, whatever Redis had counted.
      assert.deepEqual(
        during.map((d) => d.allowed),
        [true, true, false],
      );
      await assert.rejects(limiter.ping(), 'readiness sees the outage');
      assert.deepEqual(events, ['unavailable'], 'one warning per outage, not one per request');
    } finally {
      await server.resume();
    }
    // Reconnection is the client's own, with a back-off: wait until Redis counts again.
    const deadline = Date.now() + 10_000;
    let after = await limiter.take(`${k}-after`, 5, 60, at(START));
    while (!events.includes('recovered') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await limiter.take(`${k}-after`, 5, 60, at(START));
    }
    assert.deepEqual(events, ['unavailable', 'recovered']);
    assert.equal(after.allowed, true);
    await limiter.ping();
    await limiter.close();
  });

  it('a Redis that hangs (SIGSTOP) costs one take its timeout; the rest are decided at once; back after SIGCONT', async () => {
    const server = redis as RedisServer;
    const events: string[] = [];
    const limiter = await RedisRateLimiter.connect(
      server.url,
      { unavailable: () => events.push('unavailable'), recovered: () => events.push('recovered') },
      TIMEOUT_MS,
    );
    const k = `hung-${++keySpace}`;
    try {
      // A limit within the local margin: every take asks Redis (far from it, none waits anyway).
      assert.equal((await limiter.take(k, 5, 60, at(START))).remaining, 4);
      server.freeze();
      const waited: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        await limiter.take(k, 5, 60, at(START));
        waited.push(performance.now() - started);
      }
      const [first, ...rest] = waited as [number, ...number[]];
      assert.ok(first >= TIMEOUT_MS * 0.8 && first < 1_000, `the first waited ${first.toFixed(1)} ms`);
      assert.ok(Math.max(...rest) < 10, `the rest waited up to ${Math.max(...rest).toFixed(1)} ms`);
      assert.deepEqual(events, ['unavailable']);
    } finally {
      server.thaw();
    }
    const deadline = Date.now() + 5_000;
    while (!events.includes('recovered') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(events, ['unavailable', 'recovered'], 'a ping a second finds it back');
    await limiter.close();
  });

  it('a server configured for a Redis it cannot reach fails at start', async () => {
    const server = redis as RedisServer;
    await assert.rejects(
      RedisRateLimiter.connect(`redis://127.0.0.1:${server.port + 1}`, quiet, TIMEOUT_MS),
      /Cannot reach Redis/,
    );
  });
});
