import { NadirError } from '../errors.js';

export interface AdmissionOptions {
  /** Total cost that may be in flight at once (the engine uses bytes of working memory). */
  budget: number;
  /**
   * How long a request may wait for room, ms; past it, OVERLOADED. 0: never wait. A request is
   * refused at once only when the measured pace says it could not start within this time.
   */
  maxWaitMs: number;
}

export interface AdmissionStats {
  inFlight: number;
  inFlightCost: number;
  queued: number;
  queuedCost: number;
  admitted: number;
  /** Sum of the costs admitted since start. */
  admittedCost: number;
  rejected: number;
  /** Cost finished per second of busy time (something in flight), once measured. */
  costPerSecond: number | undefined;
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
 * Busy seconds over which the pace forgets (exponentially): recent enough to follow a change of
 * request mix, long enough to span several large renders. Decaying by time, not by completion,
 * keeps renders that finish together weighted alike.
 */
const PACE_MEMORY_SECONDS = 20;

/**
 * Admits work by cost so that concurrent large requests cannot exhaust memory. Work runs while
 * the costs in flight fit the budget; beyond it, requests wait in a FIFO queue for up to
 * `maxWaitMs` (so a burst is smoothed rather than refused), and get NadirError('OVERLOADED',
 * { retryAfter }) when that time passes, or at once when the measured pace says the work ahead
 * cannot drain in time. FIFO means a big request is never starved by a stream of small ones. A
 * request costing more than the whole budget still runs, alone, so every legal request can be
 * served. Waiting requests hold no memory, so the queue is bounded by time, not by cost.
 *
 * The pace is cost finished per second of busy time (time with anything in flight), so work
 * that runs side by side is not counted twice: with 700 MB in flight and 700 MB queued at 300
 * MB/s, the queue drains in about 4.7 s, and that is what `retryAfter` says (seconds, for the
 * Retry-After header).
 */
export class AdmissionController {
  readonly options: AdmissionOptions;
  #inFlight = 0;
  #inFlightCost = 0;
  #queue: Waiter[] = [];
  #queuedCost = 0;
  #admitted = 0;
  #admittedCost = 0;
  #rejected = 0;
  readonly #idleListeners: (() => void)[] = [];
  /** Sums behind the pace, decayed with busy time: cost finished, and the busy seconds it took. */
  #finishedCost = 0;
  #busySeconds = 0;
  /** performance.now() when the busy time was last accounted for (while anything is in flight). */
  #busyMark = 0;

  constructor(options: AdmissionOptions) {
    if (!(options.budget > 0)) throw new Error(`admission budget must be positive, got ${options.budget}`);
    if (!(options.maxWaitMs >= 0)) throw new Error(`admission maxWaitMs must be >= 0, got ${options.maxWaitMs}`);
    this.options = { budget: options.budget, maxWaitMs: options.maxWaitMs };
  }

  get stats(): AdmissionStats {
    return {
      inFlight: this.#inFlight,
      inFlightCost: this.#inFlightCost,
      queued: this.#queue.length,
      queuedCost: this.#queuedCost,
      admitted: this.#admitted,
      admittedCost: this.#admittedCost,
      rejected: this.#rejected,
      costPerSecond: this.#pace(),
    };
  }

  /**
   * Calls `listener` whenever the last permit in flight is released with nothing queued: the end
   * of a burst (the engine gives freed memory back to the system then, memory.ts).
   */
  onIdle(listener: () => void): void {
    this.#idleListeners.push(listener);
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
    const { maxWaitMs } = this.options;
    if (maxWaitMs === 0 || this.#startsInSeconds(cost) * 1000 > maxWaitMs) {
      return Promise.reject(this.#overloaded());
    }

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
        reject(this.#overloaded());
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
    this.#accountBusyTime();
    this.#inFlight++;
    this.#inFlightCost += cost;
    this.#admitted++;
    this.#admittedCost += cost;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#accountBusyTime();
        this.#finishedCost += cost;
        this.#inFlight--;
        this.#inFlightCost -= cost;
        this.#admitWaiting();
        if (this.#inFlight === 0 && this.#queue.length === 0) for (const listener of this.#idleListeners) listener();
      },
    };
  }

  /** Adds the time since the last mark to the busy time if anything was in flight, decaying the past. */
  #accountBusyTime(): void {
    const now = performance.now();
    if (this.#inFlight > 0) {
      const seconds = (now - this.#busyMark) / 1000;
      const kept = Math.exp(-seconds / PACE_MEMORY_SECONDS);
      this.#busySeconds = this.#busySeconds * kept + seconds;
      this.#finishedCost *= kept;
    }
    this.#busyMark = now;
  }

  #pace(): number | undefined {
    return this.#finishedCost > 0 && this.#busySeconds > 0 ? this.#finishedCost / this.#busySeconds : undefined;
  }

  /** Admits queued requests in order while the head fits. */
  #admitWaiting(): void {
    for (let head = this.#queue[0]; head && this.#fits(head.cost); head = this.#queue[0]) head.admit();
  }

  /**
   * Seconds until a request of `cost` arriving now could start: the work ahead of it must drain
   * until it fits. 0 while nothing is measured (it waits, and maxWaitMs bounds the wait).
   */
  #startsInSeconds(cost: number): number {
    const pace = this.#pace();
    if (pace === undefined) return 0;
    const mustFinish = Math.max(0, this.#inFlightCost + this.#queuedCost + cost - this.options.budget);
    return mustFinish / pace;
  }

  #overloaded(): NadirError {
    this.#rejected++;
    return new NadirError('OVERLOADED', 'The imagery renderer is at capacity; retry after the time given.', {
      retryAfter: this.#retryAfter(),
    });
  }

  /** Seconds until the work in flight and queued has likely drained, at the measured pace. */
  #retryAfter(): number {
    const pace = this.#pace();
    if (pace === undefined) return MIN_RETRY_AFTER;
    const seconds = (this.#inFlightCost + this.#queuedCost) / pace;
    return Math.min(MAX_RETRY_AFTER, Math.max(MIN_RETRY_AFTER, Math.ceil(seconds)));
  }
}
