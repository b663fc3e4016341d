/**
 * Tile rate limits shared by every server through Redis: one counter per key and window,
 * incremented and given its expiry by one Lua script, so the count is atomic whichever server
 * (or worker) a request lands on. The windows are the MemoryRateLimiter's (fixed, aligned to
 * the epoch), so X-RateLimit-Reset is the same whoever answers.
 *
 * A map client asks for tiles by the dozen, so the takes of one key and window that arrive in
 * the same turn of the event loop are counted together: one INCRBY of n, whose result c hands
 * them the counts c-n+1 .. c in arrival order. Each request still gets its exact place in the
 * window's count (no lease, nothing reserved that another server could have used), and Redis
 * sees one command per key per turn instead of one per tile.
 *
 * When Redis cannot be reached, tiles keep being served: each process counts on its own
 * (the MemoryRateLimiter), so a key may get up to (processes x limit) in that window, and a
 * warning is logged once per outage; shared counting resumes by itself when Redis is back
 * (docs/deploy.md). Refusing every tile while a cache is down would turn a Redis outage into an
 * imagery outage.
 */
import { Redis } from 'ioredis';
import { NadirError } from '../errors.js';
import { MemoryRateLimiter, type RateDecision, type RateLimiter } from './rate-limiter.js';

/** KEYS[1] the window's counter; ARGV[1] when it may be forgotten (ms since the epoch); ARGV[2] how many to add. */
const COUNT_SCRIPT = `
local added = tonumber(ARGV[2])
local count = redis.call('INCRBY', KEYS[1], added)
if count == added then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return count`;

/** A request waits at most this long for Redis before its own process decides. */
const COMMAND_TIMEOUT_MS = 250;

export interface RedisLimiterEvents {
  /** Redis could not be asked: counting falls back to this process (once per outage). */
  unavailable(error: Error): void;
  /** Redis answered again after an outage. */
  recovered(): void;
}

type CountingRedis = Redis & { nadirCount(key: string, expireAt: number, added: number): Promise<number> };

/** The takes of one key and window gathered in this turn of the event loop. */
interface Batch {
  counter: string;
  expireAt: number;
  /** Each take's way back: its place in the window's count, or the failure. */
  waiting: { resolve: (count: number) => void; reject: (error: unknown) => void }[];
}

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: CountingRedis;
  readonly #fallback = new MemoryRateLimiter();
  readonly #events: RedisLimiterEvents;
  #down = false;
  /** Counter key -> takes not yet sent; sent together on the next setImmediate. */
  #batches = new Map<string, Batch>();

  private constructor(redis: CountingRedis, events: RedisLimiterEvents) {
    this.#redis = redis;
    this.#events = events;
  }

  /** Connects and proves Redis answers: a server configured for Redis that cannot reach it fails at start. */
  static async connect(url: string, events: RedisLimiterEvents): Promise<RedisRateLimiter> {
    const redis = new Redis(url, {
      lazyConnect: true,
      // While disconnected, commands fail at once (and the fallback decides) instead of queueing.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      // Commands issued in the same turn of the event loop go to Redis in one write.
      enableAutoPipelining: true,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    }) as CountingRedis;
    redis.defineCommand('nadirCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
    // Connection errors surface through the commands that fail; an unhandled 'error' event would crash.
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      redis.disconnect();
      throw new NadirError('INVALID_CONFIG', `Cannot reach Redis at NADIR_REDIS_URL: ${(error as Error).message}`);
    }
    return new RedisRateLimiter(redis, events);
  }

  async take(key: string, limit: number, intervalSeconds: number, now: Date): Promise<RateDecision> {
    const seconds = now.getTime() / 1000;
    const start = Math.floor(seconds / intervalSeconds) * intervalSeconds;
    const resetAt = start + intervalSeconds;
    let count: number;
    try {
      // Kept a minute past the window's end, so a server whose clock runs a little behind still finds it.
      count = await this.#count(`nadir:tiles:${key}:${intervalSeconds}:${start}`, (resetAt + 60) * 1000);
    } catch (error) {
      if (!this.#down) {
        this.#down = true;
        this.#events.unavailable(error as Error);
      }
      return this.#fallback.take(key, limit, intervalSeconds, now);
    }
    if (this.#down) {
      this.#down = false;
      this.#events.recovered();
    }
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt,
      retryAfter: Math.max(1, Math.ceil(resetAt - seconds)),
    };
  }

  /** This take's place in the window's count, counted with the other takes of this turn. */
  #count(counter: string, expireAt: number): Promise<number> {
    return new Promise((resolve, reject) => {
      let batch = this.#batches.get(counter);
      if (!batch) {
        batch = { counter, expireAt, waiting: [] };
        this.#batches.set(counter, batch);
        if (this.#batches.size === 1) setImmediate(() => this.#send());
      }
      batch.waiting.push({ resolve, reject });
    });
  }

  #send(): void {
    const batches = [...this.#batches.values()];
    this.#batches.clear();
    for (const { counter, expireAt, waiting } of batches) {
      this.#redis.nadirCount(counter, expireAt, waiting.length).then(
        (total) => {
          const first = total - waiting.length + 1;
          waiting.forEach((take, i) => take.resolve(first + i));
        },
        (error: unknown) => {
          for (const take of waiting) take.reject(error);
        },
      );
    }
  }

  /** For readiness: Redis answers now. */
  async ping(): Promise<void> {
    await this.#redis.ping();
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
