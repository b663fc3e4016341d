/**
 * A timeout and a circuit breaker in front of an engine the service cannot answer without (the
 * PostgreSQL stores): a call that does not settle within `timeoutMs`, or fails because the engine
 * is unreachable, becomes a 503 with Retry-After (`code`), never a 500 or a hang. After
 * `failuresToOpen` such failures in a row the breaker opens: calls fail at once for `openMs`,
 * so a dead engine does not cost every request its full timeout; then one call at a time goes
 * through as a probe, and the first that succeeds closes it. Recovery needs no restart.
 *
 * The ideas are the AWS Builders' Library's ("Timeouts, retries and backoff with jitter") and
 * Envoy's outlier detection; the shape is the classic closed / open / half-open breaker. A call
 * that timed out is not cancelled: its query may still finish on the engine, which is why writes
 * behind a guard must be idempotent or keyed (billing is, by its transaction token).
 */
import { type ErrorCode, NadirError } from '../errors.js';

export interface EngineGuardOptions {
  /** The engine's name in messages and logs: `PostgreSQL`. */
  engine: string;
  /** The 503 code its failures become. */
  code: Extract<ErrorCode, 'DATABASE_UNAVAILABLE' | 'STORAGE_UNAVAILABLE'>;
  timeoutMs: number;
  /** Failures in a row that open the breaker. */
  failuresToOpen: number;
  /** How long an open breaker refuses calls before a probe may go through. */
  openMs: number;
  /** Whether an error means the engine is unreachable (not a mistake in the call). */
  isUnavailable(error: unknown): boolean;
  /** Monotonic milliseconds (performance.now): the breaker measures durations, not dates. */
  monotonic?: () => number;
  /** Told when the breaker opens (with the failure that opened it) and when it closes again. */
  onOpen?(error: unknown): void;
  onClose?(): void;
  /**
   * Told of each call as it starts (refused ones too); what it returns is told how the call
   * ended and after how many ms: the seam metrics count queries, their latency and errors by.
   */
  onCall?(): (outcome: CallOutcome, ms: number) => void;
}

/** How a guarded call ended: answered, refused by the engine (a mistake in the call), or unavailable. */
export type CallOutcome = 'ok' | 'error' | 'unavailable';

export type GuardState = 'closed' | 'open' | 'half-open';

export class EngineGuard {
  readonly #options: EngineGuardOptions;
  readonly #now: () => number;
  #failures = 0;
  #openedAt: number | undefined;
  #probing = false;
  #lastError: unknown;

  constructor(options: EngineGuardOptions) {
    this.#options = options;
    this.#now = options.monotonic ?? (() => performance.now());
  }

  get state(): GuardState {
    if (this.#openedAt === undefined) return 'closed';
    return this.#now() - this.#openedAt >= this.#options.openMs ? 'half-open' : 'open';
  }

  /** The failure behind the current outage, for /ready and logs. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /** Runs `work` under the timeout and the breaker. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const ended = this.#options.onCall?.();
    if (!ended) return this.#run(work);
    const started = this.#now();
    try {
      const result = await this.#run(work);
      ended('ok', this.#now() - started);
      return result;
    } catch (error) {
      const unavailable = error instanceof NadirError && error.code === this.#options.code;
      ended(unavailable ? 'unavailable' : 'error', this.#now() - started);
      throw error;
    }
  }

  async #run<T>(work: () => Promise<T>): Promise<T> {
    const state = this.state;
    if (state === 'open' || (state === 'half-open' && this.#probing)) throw this.#refusal();
    const probe = state === 'half-open';
    if (probe) this.#probing = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new EngineTimeout(this.#options.engine, this.#options.timeoutMs)),
          this.#options.timeoutMs,
        );
      });
      const result = await Promise.race([work(), timeout]);
      this.#succeeded();
      return result;
    } catch (error) {
      if (!(error instanceof EngineTimeout) && !this.#options.isUnavailable(error)) {
        // The engine answered (a constraint, a mistake in the call): it is up.
        this.#succeeded();
        throw error;
      }
      this.#failed(error);
      throw this.#unavailable(error);
    } finally {
      clearTimeout(timer);
      if (probe) this.#probing = false;
    }
  }

  #succeeded(): void {
    this.#failures = 0;
    if (this.#openedAt !== undefined) {
      this.#openedAt = undefined;
      this.#lastError = undefined;
      this.#options.onClose?.();
    }
  }

  #failed(error: unknown): void {
    this.#lastError = error;
    this.#failures++;
    // A failed probe opens it again for a whole period; closed, it takes failuresToOpen in a row.
    const wasOpen = this.#openedAt !== undefined;
    if (wasOpen || this.#failures >= this.#options.failuresToOpen) {
      this.#openedAt = this.#now();
      if (!wasOpen) this.#options.onOpen?.(error);
    }
  }

  /** Seconds until a probe may go through (a whole open period when it is not open yet; at least 1). */
  #retryAfter(): number {
    const ms =
      this.#openedAt === undefined ? this.#options.openMs : this.#options.openMs - (this.#now() - this.#openedAt);
    return Math.max(1, Math.ceil(ms / 1000));
  }

  #refusal(): NadirError {
    return new NadirError(this.#options.code, `${this.#options.engine} is unavailable; try again shortly`, {
      retryAfter: this.#retryAfter(),
    });
  }

  #unavailable(error: unknown): NadirError {
    const why = error instanceof EngineTimeout ? 'did not answer in time' : 'is unavailable';
    // The real cause goes with it, for the request's log line (never to the client).
    return new NadirError(
      this.#options.code,
      `${this.#options.engine} ${why}; try again shortly`,
      { retryAfter: this.#retryAfter() },
      { cause: error },
    );
  }
}

/** A call the engine did not settle within the guard's timeout. */
export class EngineTimeout extends Error {
  constructor(engine: string, ms: number) {
    super(`${engine} did not answer within ${ms} ms`);
  }
}
