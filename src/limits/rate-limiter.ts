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

/**
 * One process's counters. Memory is bounded by sweeping windows that have ended. Windows are found
 * by interval, then key: two lookups by a number and a string the caller already holds (the key
 * id), not one by a key joined from both on every request, which would be a new string to hash.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<number, Map<string, Window>>();
  #count = 0;
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

  /** How many windows are held (ended ones included until a sweep): what the bound limits. */
  get size(): number {
    return this.#count;
  }

  /** Takes up to `want` requests of the window at once (worker processes lease them, rate-lease.ts). */
  grant(key: string, limit: number, intervalSeconds: number, now: Date, want: number): RateGrant {
    const seconds = now.getTime() / 1000;
    const start = Math.floor(seconds / intervalSeconds) * intervalSeconds;
    let windows = this.#windows.get(intervalSeconds);
    if (!windows) {
      windows = new Map();
      this.#windows.set(intervalSeconds, windows);
    }
    let window = windows.get(key);
    if (!window || window.start !== start) {
      if (!window) {
        if (this.#count >= this.#sweepAbove) this.#sweep(seconds);
        this.#count++;
      }
      window = { start, end: start + intervalSeconds, count: 0 };
      windows.set(key, window);
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
    for (const windows of this.#windows.values()) {
      for (const [key, window] of windows) {
        if (window.end > nowSeconds) continue;
        windows.delete(key);
        this.#count--;
      }
    }
  }
}
