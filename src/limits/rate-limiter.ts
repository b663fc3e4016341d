/**
 * Per-API-key tile rate limits (decisions.md "Tiles"): a fixed number of requests per interval,
 * with fixed windows aligned to the epoch (a 60 s window starts on the minute), so `resetAt` is
 * the same for every process that counts the same key. Behind an interface so that a shared store
 * (Redis INCR + EXPIRE on `<key>:<window start>`) can count across several servers later.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in this window after this one (0 when refused). */
  remaining: number;
  /** Unix epoch seconds when the window resets. */
  resetAt: number;
  /** Seconds until then, at least 1: what Retry-After says on a 429. */
  retryAfter: number;
}

export interface RateLimiter {
  /** Counts one request of `key` and says whether it is within `limit` per `intervalSeconds`. */
  take(key: string, limit: number, intervalSeconds: number, now: Date): Promise<RateDecision>;
  /**
   * `take`, decided at once where the counters are at hand (in this process's memory, a lease in
   * hand); undefined, counting nothing, where only a round trip can decide (Redis, an empty lease).
   * The tile lane answers a remembered tile in one step when this and the rest decide at once.
   */
  takeNow?(key: string, limit: number, intervalSeconds: number, now: Date): RateDecision | undefined;
  /** For readiness: the counters can be reached (in memory: always). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

interface Window {
  start: number;
  end: number;
  count: number;
}

export interface RateGrant {
  /** How many of the requested requests are allowed (0 when the window is used up). */
  granted: number;
  /** Left in the window after this grant. */
  remaining: number;
  resetAt: number;
  retryAfter: number;
}

/** One process's counters. Memory is bounded by sweeping windows that have ended. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #sweepAbove: number;

  constructor(sweepAbove = 10_000) {
    this.#sweepAbove = sweepAbove;
  }

  async take(key: string, limit: number, intervalSeconds: number, now: Date): Promise<RateDecision> {
    return this.takeNow(key, limit, intervalSeconds, now);
  }

  takeNow(key: string, limit: number, intervalSeconds: number, now: Date): RateDecision {
    const { granted, remaining, resetAt, retryAfter } = this.grant(key, limit, intervalSeconds, now, 1);
    return { allowed: granted === 1, limit, remaining, resetAt, retryAfter };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  /** Takes up to `want` requests of the window at once (worker processes lease them, rate-lease.ts). */
  grant(key: string, limit: number, intervalSeconds: number, now: Date, want: number): RateGrant {
    const seconds = now.getTime() / 1000;
    const start = Math.floor(seconds / intervalSeconds) * intervalSeconds;
    const id = `${key}/${intervalSeconds}`;
    let window = this.#windows.get(id);
    if (!window || window.start !== start) {
      if (this.#windows.size >= this.#sweepAbove) this.#sweep(seconds);
      window = { start, end: start + intervalSeconds, count: 0 };
      this.#windows.set(id, window);
    }
    const granted = Math.max(0, Math.min(want, limit - window.count));
    window.count += granted;
    return {
      granted,
      remaining: Math.max(0, limit - window.count),
      resetAt: window.end,
      retryAfter: Math.max(1, Math.ceil(window.end - seconds)),
    };
  }

  #sweep(nowSeconds: number): void {
    for (const [id, window] of this.#windows) if (window.end <= nowSeconds) this.#windows.delete(id);
  }
}
