/**
 * Rate limits across the worker processes of one `nadir serve --workers N`: the primary process
 * holds the counters (a MemoryRateLimiter) and workers lease requests from it in small batches,
 * so a key's limit is shared by all workers whichever of them its connections land on, while
 * only one message in `lease` requests crosses between processes.
 *
 * Never more than the limit is admitted: the primary grants only what is left. A lease a worker
 * has not used up when another worker runs dry is not moved across, so near the end of a window
 * a key may be refused up to (workers - 1) x 1.5 leases early (the next lease is asked for when
 * half of one is left); leases are 1/32 of the limit per worker (at least 1, at most 1,000), so
 * that is at most about 5% of the limit.
 */
import type { RateDecision, RateGrant, RateLimiter } from './rate-limiter.js';

export interface LeaseRequest {
  key: string;
  limit: number;
  intervalSeconds: number;
  want: number;
  /** Epoch ms of the request, so worker and primary agree on the window. */
  at: number;
}

export type RequestLease = (request: LeaseRequest) => Promise<RateGrant>;

interface Lease {
  /** Unix seconds when this window ends (the same arithmetic as the primary's). */
  resetAt: number;
  /** Leased and not yet used. */
  tokens: number;
  /** What the primary said was left after this worker's last lease. */
  remaining: number;
  /** The primary granted nothing: refuse until the window resets. */
  exhausted: boolean;
  refill: Promise<void> | undefined;
}

export function leaseSize(limit: number, workers: number): number {
  return Math.max(1, Math.min(1_000, Math.floor(limit / (32 * workers))));
}

export class LeasedRateLimiter implements RateLimiter {
  readonly #request: RequestLease;
  readonly #workers: number;
  readonly #leases = new Map<string, Lease>();

  constructor(request: RequestLease, workers: number) {
    this.#request = request;
    this.#workers = workers;
  }

  /** `take`, when the lease in hand decides it; undefined, counting nothing, when only the primary can. */
  takeNow(key: string, limit: number, intervalSeconds: number, now: Date): RateDecision | undefined {
    const { lease, resetAt, retryAfter } = this.#leaseOf(key, limit, intervalSeconds, now);
    if (lease.tokens > 0) {
      lease.tokens--;
      const want = leaseSize(limit, this.#workers);
      // The next lease is asked for while half of this one is left, so a steady stream of
      // requests is decided without waiting for the primary.
      if (lease.tokens < want / 2 && !lease.refill && lease.remaining > 0) {
        this.#startRefill(lease, { key, limit, intervalSeconds, want, at: now.getTime() }).catch(() => undefined);
      }
      return { allowed: true, limit, remaining: lease.remaining + lease.tokens, resetAt, retryAfter };
    }
    if (lease.exhausted) return { allowed: false, limit, remaining: 0, resetAt, retryAfter };
    return undefined;
  }

  #leaseOf(key: string, limit: number, intervalSeconds: number, now: Date) {
    const seconds = now.getTime() / 1000;
    const resetAt = Math.floor(seconds / intervalSeconds) * intervalSeconds + intervalSeconds;
    const id = `${key}/${intervalSeconds}/${limit}/${resetAt}`;
    let lease = this.#leases.get(id);
    if (!lease) {
      this.#sweep(seconds);
      lease = { resetAt, tokens: 0, remaining: limit, exhausted: false, refill: undefined };
      this.#leases.set(id, lease);
    }
    return { lease, resetAt, retryAfter: Math.max(1, Math.ceil(resetAt - seconds)) };
  }

  async take(key: string, limit: number, intervalSeconds: number, now: Date): Promise<RateDecision> {
    const { lease } = this.#leaseOf(key, limit, intervalSeconds, now);
    for (;;) {
      const decided = this.takeNow(key, limit, intervalSeconds, now);
      if (decided) return decided;
      // Concurrent requests of one key wait for the same lease rather than each asking for one.
      await this.#startRefill(lease, {
        key,
        limit,
        intervalSeconds,
        want: leaseSize(limit, this.#workers),
        at: now.getTime(),
      });
    }
  }

  /** The primary is this process's parent: reachable while this process runs. */
  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  /** The lease's refill under way, or a new one. */
  #startRefill(lease: Lease, request: LeaseRequest): Promise<void> {
    lease.refill ??= this.#refill(lease, request).finally(() => {
      lease.refill = undefined;
    });
    return lease.refill;
  }

  async #refill(lease: Lease, request: LeaseRequest): Promise<void> {
    const grant = await this.#request(request);
    lease.tokens += grant.granted;
    lease.remaining = grant.remaining;
    lease.exhausted = grant.granted === 0;
  }

  #sweep(nowSeconds: number): void {
    if (this.#leases.size < 1024) return;
    for (const [id, lease] of this.#leases) if (lease.resetAt <= nowSeconds && !lease.refill) this.#leases.delete(id);
  }
}
