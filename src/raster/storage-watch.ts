/**
 * The storage deadline of raster renders (issue 32). GDAL reads remote survey files itself, through
 * /vsis3/ or /vsicurl/, and a read of a store that has stopped answering (a SIGSTOPped S3 server,
 * a store that answers HEAD and never a range) waits out GDAL_HTTP_TIMEOUT, is retried, and is
 * followed by the warper's next read: a render took 11 s at a 2 s timeout, 36 s at 3 s with GDAL's
 * default retry delay. GDAL's work cannot be cancelled from JavaScript (gdal-async's progress
 * callback cannot stop it), so the deadline is kept beside it:
 *
 * - While a render runs, the watch reads one byte of each file it reads from the store itself
 *   (`SurveyStorage.probe`: the same object, past any cache), every `intervalMs`: one probe per file at a
 *   time, shared by every render of that file. A probe the store does not answer within
 *   `timeoutMs` (NADIR_STORAGE_TIMEOUT_MS) means the store hangs: every render in flight is
 *   answered STORAGE_UNAVAILABLE (503, Retry-After) there and then, so a request waits about the
 *   timeout, not GDAL's sum of timeouts and retries.
 * - The GDAL work goes on until its own reads time out (or the store answers again); the engine
 *   keeps the request's admission permit and scratch files until then, so the memory accounting
 *   stays true.
 * - While the store is known not to answer, renders are refused at once, before they take memory
 *   or a thread of libuv's pool (a breaker: AWS Builders' Library, Envoy's outlier detection);
 *   `intervalMs` after the last failed probe, one render probes the store again (the others are
 *   still refused) and goes ahead if it answers. Recovery needs no restart.
 * - A probe the store answers with an error (a missing object, refused credentials) does not mean
 *   it hangs: the breaker stays closed, and the render fails on its own (STORAGE_UNAVAILABLE).
 *
 * Timers and the monotonic clock are injected (`Timers`), so tests run it on a clock they move.
 */
import { type NadirError, SOCKET_ERROR_CODES } from '../errors.js';
import { storageUnavailable } from '../storage/storage.js';

/** The timers and monotonic clock (ms) the watch runs on: the system's, or a test's. */
export interface Timers {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const SYSTEM_TIMERS: Timers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface StorageWatchOptions {
  /** Reads a byte of a stored file from the store (`SurveyStorage.probe`). */
  probe(location: string): Promise<unknown>;
  /** NADIR_STORAGE_TIMEOUT_MS: a probe the store does not answer within this means it hangs. */
  timeoutMs: number;
  /**
   * Between two probes of a file while renders read it, and how long renders are refused after a
   * failed probe before one may probe again. Default: a quarter of the timeout, 250 ms to 1 s, so
   * a store that stops answering is noticed within about 1.25 x the timeout.
   */
  intervalMs?: number;
  timers?: Timers;
}

export type StorageState = 'up' | 'down';

type ProbeResult = { ok: true } | { ok: false; answered: boolean; error: unknown };

/** A probe that did not settle within the timeout. */
export class ProbeTimeout extends Error {
  constructor(location: string, ms: number) {
    super(`the storage did not answer a 1-byte read of ${location} within ${ms} ms`);
    this.name = 'ProbeTimeout';
  }
}

const NO_ANSWER_CODES = new Set([
  ...SOCKET_ERROR_CODES,
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * Whether an error of a probe means the store did not answer (unreachable, timed out, or failing
 * with a 5xx), as opposed to an answer about the object (404, 403).
 */
export function isNoAnswer(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { name, code, $metadata } = e as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
    if (e instanceof ProbeTimeout || name === 'AbortError' || name === 'TimeoutError') return true;
    if (code !== undefined && NO_ANSWER_CODES.has(code)) return true;
    if ($metadata) return $metadata.httpStatusCode === undefined || $metadata.httpStatusCode >= 500;
  }
  return error instanceof TypeError && error.message === 'fetch failed';
}

interface Guarded {
  abandon(error: NadirError): void;
}

export class StorageWatch {
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly #probeFile: (location: string) => Promise<unknown>;
  readonly #timers: Timers;
  readonly #probes = new Map<string, Promise<ProbeResult>>();
  /** When each file last answered a probe: a render starting within intervalMs of it sends none. */
  readonly #answeredAt = new Map<string, number>();
  readonly #guarded = new Set<Guarded>();
  #down: { since: number; location: string; error: unknown } | undefined;
  #probing = false;
  #abandoned = 0;

  constructor(options: StorageWatchOptions) {
    if (!(options.timeoutMs > 0)) throw new Error(`storage timeout must be positive, got ${options.timeoutMs}`);
    this.timeoutMs = options.timeoutMs;
    this.intervalMs = options.intervalMs ?? Math.min(1_000, Math.max(250, Math.round(options.timeoutMs / 4)));
    this.#probeFile = options.probe;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
  }

  get state(): StorageState {
    return this.#down ? 'down' : 'up';
  }

  /** Renders answered STORAGE_UNAVAILABLE while their GDAL work was still running, since start. */
  get abandoned(): number {
    return this.#abandoned;
  }

  /**
   * Before a render takes memory or a thread: refuses it at once (STORAGE_UNAVAILABLE) while the
   * store is known not to answer; `intervalMs` after the last failed probe, this caller probes the
   * store (waiting at most the timeout) and goes ahead if it answers, while the others are still
   * refused.
   */
  async admit(locations: readonly string[]): Promise<void> {
    const down = this.#down;
    if (!down) return;
    const waited = this.#timers.now() - down.since;
    if (this.#probing || waited < this.intervalMs) {
      throw this.#unavailable(down.location, down.error, this.intervalMs - waited);
    }
    this.#probing = true;
    try {
      const failed = await this.#probeAll(locations, true);
      if (failed && !failed.answered) {
        this.#markDown(failed.location, failed.error);
        throw this.#unavailable(failed.location, failed.error, this.intervalMs);
      }
      this.#markUp();
    } finally {
      this.#probing = false;
    }
  }

  /**
   * `work`, already started, raced against the store: settles as `work` does, unless a probe of
   * `locations` goes unanswered for the timeout first; then it rejects with STORAGE_UNAVAILABLE at
   * once (as does every other render in flight) and `work` is left to end on its own.
   */
  guard<T>(work: Promise<T>, locations: readonly string[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let timer: unknown;
      const finish = () => {
        settled = true;
        if (timer !== undefined) this.#timers.clearTimeout(timer);
        this.#guarded.delete(entry);
      };
      const entry: Guarded = {
        abandon: (error) => {
          if (settled) return;
          finish();
          this.#abandoned++;
          reject(error);
        },
      };
      this.#guarded.add(entry);
      work.then(
        (value) => {
          if (settled) return;
          finish();
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          finish();
          reject(error);
        },
      );
      const round = async () => {
        timer = undefined;
        if (settled) return;
        const failed = await this.#probeAll(locations);
        if (settled) return;
        if (failed && !failed.answered) {
          this.#markDown(failed.location, failed.error);
          return;
        }
        if (!failed) this.#markUp();
        timer = this.#timers.setTimeout(() => void round(), this.intervalMs);
      };
      void round();
    });
  }

  /**
   * After a render failed: STORAGE_UNAVAILABLE when the store is known not to answer or a probe of
   * `locations` fails now (for any reason: a missing file and refused credentials are the
   * storage's fault too), with GDAL's words and the probe's in the cause; undefined when the store
   * reads those files fine (the failure is nadir's own).
   */
  async blame(locations: readonly string[], error: unknown): Promise<NadirError | undefined> {
    const reason = error instanceof Error && error.message ? error.message : 'a read failed';
    const down = this.#down;
    if (down) return this.#unavailable(down.location, down.error, this.intervalMs, reason);
    const failed = await this.#probeAll(locations, true);
    if (!failed) return undefined;
    if (!failed.answered) this.#markDown(failed.location, failed.error);
    return this.#unavailable(failed.location, failed.error, this.intervalMs, reason);
  }

  /**
   * The first failure among probes of `locations`, or undefined when every one was answered with
   * its byte. Unless `fresh`, a file that answered less than intervalMs ago is not asked again (a
   * map tile of DsmChange renders in tens of milliseconds: at most one probe per file and interval).
   */
  async #probeAll(
    locations: readonly string[],
    fresh = false,
  ): Promise<{ location: string; answered: boolean; error: unknown } | undefined> {
    const now = this.#timers.now();
    const results = await Promise.all(
      locations.map((location) => {
        const answered = this.#answeredAt.get(location);
        if (!fresh && answered !== undefined && now - answered < this.intervalMs) return { ok: true as const };
        return this.#probe(location);
      }),
    );
    let first: { location: string; answered: boolean; error: unknown } | undefined;
    for (const [i, result] of results.entries()) {
      if (result.ok) continue;
      const failure = { location: locations[i] as string, answered: result.answered, error: result.error };
      if (!failure.answered) return failure;
      first ??= failure;
    }
    return first;
  }

  /** One probe of a file at a time, shared by whoever asks while it runs; bounded by the timeout. */
  #probe(location: string): Promise<ProbeResult> {
    const running = this.#probes.get(location);
    if (running) return running;
    const probe = new Promise<ProbeResult>((resolve) => {
      const timer = this.#timers.setTimeout(
        () => resolve({ ok: false, answered: false, error: new ProbeTimeout(location, this.timeoutMs) }),
        this.timeoutMs,
      );
      let reading: Promise<unknown>;
      try {
        reading = this.#probeFile(location);
      } catch (error) {
        reading = Promise.reject(error);
      }
      reading.then(
        () => {
          this.#timers.clearTimeout(timer);
          if (this.#answeredAt.size >= 4096) this.#answeredAt.clear();
          this.#answeredAt.set(location, this.#timers.now());
          resolve({ ok: true });
        },
        (error: unknown) => {
          this.#timers.clearTimeout(timer);
          resolve({ ok: false, answered: !isNoAnswer(error), error });
        },
      );
    }).finally(() => this.#probes.delete(location));
    this.#probes.set(location, probe);
    return probe;
  }

  #markDown(location: string, error: unknown): void {
    this.#down = { since: this.#timers.now(), location, error };
    for (const render of [...this.#guarded]) render.abandon(this.#unavailable(location, error, this.intervalMs));
  }

  #markUp(): void {
    this.#down = undefined;
  }

  #unavailable(location: string, error: unknown, waitMs: number, gdal?: string): NadirError {
    const probe = error instanceof Error && error.message ? error.message : String(error);
    const cause = new Error(gdal ? `${gdal}; storage: ${probe}` : `storage: ${probe}`);
    return storageUnavailable(location, cause, Math.max(1, Math.ceil(waitMs / 1000)));
  }
}
