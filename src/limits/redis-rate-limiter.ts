/**
 * Tile rate limits shared by every server through Redis: one counter per key and window,
 * incremented and given its expiry by one Lua script, so the count is atomic whichever server
 * (or worker) a request lands on. The windows are the MemoryRateLimiter's (fixed, aligned to
 * the epoch), so X-RateLimit-Reset is the same whoever answers.
 *
 * A map client asks for tiles by the dozen, so the takes of one key and window that arrive in
 * the same turn of the event loop are counted together: one INCRBY of n, whose result c hands
 * them the counts c-n+1 .. c in arrival order, and Redis sees one command per key per turn.
 *
 * Waiting for that answer costs a round trip per turn, during which the process has nothing to
 * do (bench/scale: the server was busy 57% of the time with Redis against 83% without, and
 * answered 40% fewer tiles). So a key known to be far from its limit is decided here: while the
 * window's last count from Redis, plus this process's takes since, stays below the limit by a
 * margin (a tenth of it, at least 20), a take is allowed at once and only counted later. Near the
 * limit every take waits for its exact place, so the limit holds across servers unless the others
 * add more than the margin between a server's last answer from Redis and its count reaching it.
 *
 * Takes decided here are sent at the end of their turn once a key has a quarter of its margin
 * unsent (or any take waiting), or once its count is within two margins of the limit; otherwise
 * after SETTLE_MS: a map client's few tiles a second on a key far from its limit then cost Redis
 * one command per key every SETTLE_MS rather than one per turn (bench/scale measured the
 * difference). Near the limit a count held back for SETTLE_MS let the other servers place that
 * many takes past it: two servers sharing a limit of 100 once admitted 101 (test/deploy), so
 * there nothing is held past its turn. A crash loses at most SETTLE_MS of counts; a clean close
 * sends them.
 *
 * When Redis cannot be reached, tiles keep being served: each process counts on its own
 * (the MemoryRateLimiter), so a key may get up to (processes x limit) in that window, and a
 * warning is logged once per outage; shared counting resumes by itself when Redis is back
 * (docs/deploy.md). Refusing every tile while a cache is down would turn a Redis outage into an
 * imagery outage. A round trip waits at most `timeoutMs` (NADIR_REDIS_TIMEOUT_MS, tens of ms);
 * once one failed, takes stop asking Redis at all (a breaker: a Redis that hangs would otherwise
 * cost every tile its timeout) and one ping a second finds out when it is back.
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

/** While Redis is away, how often one ping asks whether it is back. */
const PROBE_MS = 1_000;
/** At most this long between a take decided here and its count reaching Redis. */
const SETTLE_MS = 20;

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
  /** Takes already allowed here, far from the limit: counted, nobody waits for them. */
  settled: number;
  /** Each waiting take's way back: its place in the window's count, or the failure. */
  waiting: { resolve: (count: number) => void; reject: (error: unknown) => void }[];
}

/** How close to its limit a window may get before every take waits for Redis. */
export function localMargin(limit: number): number {
  return Math.max(20, Math.ceil(limit / 10));
}

/**
 * Whether a key's takes decided here go to Redis at the end of this turn rather than within
 * SETTLE_MS: once a quarter of its margin is unsent, or once its count is within two margins of
 * the limit (where a count held back lets the other servers place takes past it).
 */
function sendsThisTurn(unsent: number, count: number, limit: number, margin: number): boolean {
  return unsent >= Math.max(1, Math.floor(margin / 4)) || count > limit - 2 * margin;
}

/** Keys whose window is tracked before old windows are swept. */
const TRACKED_WINDOWS = 10_000;

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: CountingRedis;
  readonly #fallback = new MemoryRateLimiter();
  readonly #events: RedisLimiterEvents;
  #down = false;
  /** The ping that looks for Redis's return while it is away. */
  #probe: NodeJS.Timeout | undefined;
  /** Counter key -> takes not yet sent; sent together at the end of a turn or after SETTLE_MS. */
  #batches = new Map<string, Batch>();
  #sendAtTurnEnd: NodeJS.Immediate | undefined;
  #sendLater: NodeJS.Timeout | undefined;
  /** Counter key -> the window's count as last seen here: Redis's answer plus takes allowed since. */
  #known = new Map<string, { count: number; expireAt: number }>();

  private constructor(redis: CountingRedis, events: RedisLimiterEvents) {
    this.#redis = redis;
    this.#events = events;
  }

  /** Connects and proves Redis answers: a server configured for Redis that cannot reach it fails at start. */
  static async connect(url: string, events: RedisLimiterEvents, timeoutMs: number): Promise<RedisRateLimiter> {
    const redis = new Redis(url, {
      lazyConnect: true,
      // While disconnected, commands fail at once (and the fallback decides) instead of queueing.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // A request waits at most this long for Redis before its own process decides.
      commandTimeout: timeoutMs,
      connectTimeout: Math.max(timeoutMs, 1_000),
      // Commands issued in the same turn of the event loop go to Redis in one write.
      enableAutoPipelining: true,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    }) as CountingRedis;
    redis.defineCommand('nadirCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
    // Connection errors surface through the commands that fail; an unhandled 'error' event would crash.
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      // The first answer may take a connection's set-up: give it longer than a tile's round trip.
      await Promise.race([
        redis.ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('no answer to PING within 5 s')), 5_000).unref()),
      ]);
    } catch (error) {
      redis.disconnect();
      throw new NadirError('INVALID_CONFIG', `Cannot reach Redis at NADIR_REDIS_URL: ${(error as Error).message}`);
    }
    return new RedisRateLimiter(redis, events);
  }

  async take(key: string, limit: number, intervalSeconds: number, now: Date): Promise<RateDecision> {
    if (this.#down) return this.#fallback.take(key, limit, intervalSeconds, now);
    const seconds = now.getTime() / 1000;
    const start = Math.floor(seconds / intervalSeconds) * intervalSeconds;
    const resetAt = start + intervalSeconds;
    let count: number;
    try {
      // Kept a minute past the window's end, so a server whose clock runs a little behind still finds it.
      const counter = `nadir:tiles:${key}:${intervalSeconds}:${start}`;
      const expireAt = (resetAt + 60) * 1000;
      const known = this.#down ? undefined : this.#known.get(counter);
      const margin = localMargin(limit);
      if (known && known.count + 1 <= limit - margin) {
        known.count++;
        const batch = this.#batchFor(counter, expireAt);
        batch.settled++;
        if (sendsThisTurn(batch.settled, known.count, limit, margin)) this.#sendAtEndOfTurn();
        else this.#sendWithin(SETTLE_MS);
        count = known.count;
      } else {
        count = await this.#count(counter, expireAt, now.getTime());
      }
    } catch (error) {
      this.#wentDown(error as Error);
      return this.#fallback.take(key, limit, intervalSeconds, now);
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
  #count(counter: string, expireAt: number, nowMs: number): Promise<number> {
    if (!this.#known.has(counter)) this.#track(counter, expireAt, nowMs);
    return new Promise((resolve, reject) => {
      this.#batchFor(counter, expireAt).waiting.push({ resolve, reject });
      this.#sendAtEndOfTurn();
    });
  }

  #track(counter: string, expireAt: number, nowMs: number): void {
    if (this.#known.size >= TRACKED_WINDOWS) {
      for (const [key, window] of this.#known) if (window.expireAt < nowMs) this.#known.delete(key);
    }
    // Unknown until Redis answers: an infinite count never allows a local decision (see take).
    this.#known.set(counter, { count: Number.POSITIVE_INFINITY, expireAt });
  }

  #batchFor(counter: string, expireAt: number): Batch {
    let batch = this.#batches.get(counter);
    if (!batch) {
      batch = { counter, expireAt, settled: 0, waiting: [] };
      this.#batches.set(counter, batch);
    }
    return batch;
  }

  #sendAtEndOfTurn(): void {
    this.#sendAtTurnEnd ??= setImmediate(() => this.#send());
  }

  #sendWithin(ms: number): void {
    if (this.#sendAtTurnEnd || this.#sendLater) return;
    this.#sendLater = setTimeout(() => this.#send(), ms);
    this.#sendLater.unref();
  }

  /** Every key's unsent takes, one command per key. */
  #send(): void {
    clearImmediate(this.#sendAtTurnEnd);
    clearTimeout(this.#sendLater);
    this.#sendAtTurnEnd = undefined;
    this.#sendLater = undefined;
    const batches = [...this.#batches.values()];
    this.#batches.clear();
    for (const { counter, expireAt, settled, waiting } of batches) {
      this.#redis.nadirCount(counter, expireAt, settled + waiting.length).then(
        (total) => {
          // Those allowed here came first; the waiting ones take the places after them.
          const first = total - waiting.length + 1;
          for (const [i, take] of waiting.entries()) take.resolve(first + i);
          const known = this.#known.get(counter);
          if (known) known.count = Number.isFinite(known.count) ? Math.max(known.count, total) : total;
        },
        (error: unknown) => {
          // Counts allowed here are lost to Redis; forget the window so the next take asks (and falls back).
          this.#known.delete(counter);
          for (const take of waiting) take.reject(error);
          this.#wentDown(error as Error);
        },
      );
    }
  }

  /** Counting falls back to this process, and a ping a second looks for Redis's return. */
  #wentDown(error: Error): void {
    if (this.#down) return;
    this.#down = true;
    this.#known.clear();
    this.#events.unavailable(error);
    this.#probe = setInterval(() => {
      this.#redis.ping().then(
        () => {
          if (!this.#down) return;
          this.#down = false;
          clearInterval(this.#probe);
          this.#probe = undefined;
          this.#events.recovered();
        },
        () => undefined,
      );
    }, PROBE_MS);
    this.#probe.unref();
  }

  /** For readiness: Redis answers now. */
  async ping(): Promise<void> {
    await this.#redis.ping();
  }

  /** Sends the counts still held here (Redis answers within its timeout, or they are lost), then disconnects. */
  async close(): Promise<void> {
    clearInterval(this.#probe);
    if (this.#batches.size > 0 && !this.#down) {
      this.#send();
      await this.#redis.ping().catch(() => undefined);
    }
    this.#redis.disconnect();
  }
}
