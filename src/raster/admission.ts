import { NadirError } from '../errors.js';

export interface AdmissionOptions {
  /** Total cost that may be in flight at once (the engine uses bytes of working memory). */
  budget: number;
  /** How long a request may wait for room before it gets OVERLOADED, ms. 0: never wait. */
  maxWaitMs: number;
  /**
   * Cost that may wait in the queue at once; beyond it, OVERLOADED at once rather than a wait
   * that is likely to time out. The first waiter is always accepted.
   */
  maxQueuedCost: number;
}

export interface AdmissionStats {
  inFlight: number;
  inFlightCost: number;
  queued: number;
  queuedCost: number;
  admitted: number;
  rejected: number;
}

/** Returned by `acquire`: call `release` exactly once when the work is done (further calls do nothing). */
export interface Permit {
  release(): void;
}

interface Waiter {
  cost: number;
  admit: () => void;
}

const MIN_RETRY_AFTER = 1;
const MAX_RETRY_AFTER = 60;

/**
 * Admits work by cost so that concurrent large requests cannot exhaust memory. Work runs while
 * the costs in flight fit the budget; beyond it, requests wait in a FIFO queue for up to
 * `maxWaitMs` (so a burst is smoothed rather than refused), and are refused with
 * NadirError('OVERLOADED', { retryAfter }) when the wait would be too long or the queue is full.
 * FIFO means a big request is never starved by a stream of small ones. A request costing more
 * than the whole budget still runs, alone, so every legal request can be served.
 *
 * `retryAfter` (seconds, for the Retry-After header) estimates how long the work ahead takes to
 * drain, from the observed seconds per unit of cost of finished work.
 */
export class AdmissionController {
  readonly options: AdmissionOptions;
  #inFlight = 0;
  #inFlightCost = 0;
  #queue: Waiter[] = [];
  #queuedCost = 0;
  #admitted = 0;
  #rejected = 0;
  /** Exponentially weighted mean of seconds per unit cost over finished work. */
  #secondsPerUnit: number | undefined;

  constructor(options: AdmissionOptions) {
    if (!(options.budget > 0)) throw new Error(`admission budget must be positive, got ${options.budget}`);
    if (!(options.maxWaitMs >= 0)) throw new Error(`admission maxWaitMs must be >= 0, got ${options.maxWaitMs}`);
    if (!(options.maxQueuedCost >= 0)) throw new Error('admission maxQueuedCost must be >= 0');
    this.options = { ...options };
  }

  get stats(): AdmissionStats {
    return {
      inFlight: this.#inFlight,
      inFlightCost: this.#inFlightCost,
      queued: this.#queue.length,
      queuedCost: this.#queuedCost,
      admitted: this.#admitted,
      rejected: this.#rejected,
    };
  }

  /** Runs `work` once admitted, releasing its cost however it ends. */
  async run<T>(cost: number, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const permit = await this.acquire(cost, signal);
    try {
      return await work();
    } finally {
      permit.release();
    }
  }

  /** Waits for room for `cost`; rejects with OVERLOADED, or with the signal's reason if aborted. */
  acquire(cost: number, signal?: AbortSignal): Promise<Permit> {
    if (!(cost > 0) || !Number.isFinite(cost)) return Promise.reject(new Error(`cost must be positive, got ${cost}`));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#queue.length === 0 && this.#fits(cost)) return Promise.resolve(this.#start(cost));
    const { maxWaitMs, maxQueuedCost } = this.options;
    // Someone may always wait at the head, however big, so an oversized request is not refused forever.
    const queueFull = this.#queue.length > 0 && this.#queuedCost + cost > maxQueuedCost;
    if (maxWaitMs === 0 || queueFull) return Promise.reject(this.#overloaded(cost));

    return new Promise<Permit>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) {
          this.#queue.splice(index, 1);
          this.#queuedCost -= cost;
        }
      };
      const waiter: Waiter = {
        cost,
        admit: () => {
          leave();
          resolve(this.#start(cost));
        },
      };
      const onAbort = () => {
        leave();
        reject(signal?.reason);
        this.#admitWaiting(); // the head may have been blocking smaller requests behind it
      };
      const timer = setTimeout(() => {
        leave();
        reject(this.#overloaded(cost));
        this.#admitWaiting();
      }, maxWaitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#queuedCost += cost;
    });
  }

  #fits(cost: number): boolean {
    return this.#inFlight === 0 || this.#inFlightCost + cost <= this.options.budget;
  }

  #start(cost: number): Permit {
    this.#inFlight++;
    this.#inFlightCost += cost;
    this.#admitted++;
    const started = performance.now();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#inFlight--;
        this.#inFlightCost -= cost;
        this.#learn((performance.now() - started) / 1000 / cost);
        this.#admitWaiting();
      },
    };
  }

  #learn(secondsPerUnit: number): void {
    const previous = this.#secondsPerUnit;
    this.#secondsPerUnit = previous === undefined ? secondsPerUnit : 0.8 * previous + 0.2 * secondsPerUnit;
  }

  /** Admits queued requests in order while the head fits. */
  #admitWaiting(): void {
    for (let head = this.#queue[0]; head && this.#fits(head.cost); head = this.#queue[0]) head.admit();
  }

  #overloaded(cost: number): NadirError {
    this.#rejected++;
    return new NadirError('OVERLOADED', 'The imagery renderer is at capacity; retry after the time given.', {
      retryAfter: this.#retryAfter(cost),
    });
  }

  /** Seconds until the work ahead (in flight, queued, and this request) has likely drained. */
  #retryAfter(cost: number): number {
    if (this.#secondsPerUnit === undefined) return MIN_RETRY_AFTER;
    const ahead = this.#inFlightCost + this.#queuedCost + cost;
    // Work in flight runs side by side: the queue drains about `inFlight` requests at a time.
    const seconds = (this.#secondsPerUnit * ahead) / Math.max(1, this.#inFlight);
    return Math.min(MAX_RETRY_AFTER, Math.max(MIN_RETRY_AFTER, Math.ceil(seconds)));
  }
}
