/**
 * Sending a request until it gets an answer worth returning: a 429 is waited out for as long as
 * the server says (Retry-After, else X-RateLimit-Reset), a 5xx or a network failure is retried
 * after a jittered exponential backoff ("full jitter": a random wait up to the doubling cap, so
 * clients that failed together do not retry together). Every wait ends when the signal aborts.
 */
import { errorFromResponse, NadirNetworkError, RateLimitedError } from './errors.js';
import { abortReason, type Clock, type Sleep } from './waiting.js';

export interface RetryPolicy {
  /** 429s waited out before RateLimitedError is thrown. */
  rateLimitRetries: number;
  /** Retries of a 5xx or of a request that got no answer. */
  serverRetries: number;
  /** First backoff cap; it doubles with each retry up to maxBackoffMs. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** The longest single wait a 429 or 503 may ask for; one longer is thrown at once. */
  maxWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  rateLimitRetries: 10,
  serverRetries: 4,
  baseBackoffMs: 250,
  maxBackoffMs: 20_000,
  maxWaitMs: 5 * 60_000,
};

export interface RetryWait {
  why: 'rate-limited' | 'server-error' | 'no-answer';
  ms: number;
  /** 1 for the first retry. */
  attempt: number;
  status?: number;
}

export interface RetryContext {
  policy: RetryPolicy;
  clock: Clock;
  sleep: Sleep;
  /** [0, 1), for the jitter. */
  random: () => number;
  onWait?: (wait: RetryWait) => void;
}

function checkPolicy(policy: RetryPolicy): void {
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`retry.${name} must be a number >= 0, got ${value}`);
  }
}

/**
 * How long a 429 (or a 503 that says) asks to wait, in ms: Retry-After in seconds or as an HTTP
 * date, else the rate-limit window's end (X-RateLimit-Reset, Unix seconds); undefined when neither.
 */
export function serverRequestedWaitMs(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number(retryAfter) * 1000;
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (reset && /^\d+(\.\d+)?$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now);
  return undefined;
}

/** Full jitter: uniform in [0, min(max, base * 2^(attempt-1))]. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const cap = Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** (attempt - 1));
  return Math.round(random() * cap);
}

function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (error instanceof Error && error.name === 'AbortError');
}

/**
 * Calls `send` until it answers 2xx/3xx (returned, body unread) or fails for good (thrown as the
 * typed error). 4xx other than 429 are never retried: the same request would fail the same way.
 */
export async function sendWithRetry(
  send: () => Promise<Response>,
  context: RetryContext,
  signal?: AbortSignal,
): Promise<Response> {
  const { policy } = context;
  checkPolicy(policy);
  let rateLimited = 0;
  let failures = 0;
  for (;;) {
    if (signal?.aborted) throw abortReason(signal);
    let response: Response;
    try {
      response = await send();
    } catch (error) {
      if (isAbort(error, signal)) throw signal?.aborted ? abortReason(signal) : error;
      failures++;
      if (failures > policy.serverRetries) {
        throw new NadirNetworkError(`no answer after ${failures} attempts: ${(error as Error).message}`, {
          cause: error,
        });
      }
      await wait(
        context,
        { why: 'no-answer', ms: backoffMs(policy, failures, context.random), attempt: failures },
        signal,
      );
      continue;
    }
    if (response.status < 400) return response;
    if (response.status === 429) {
      const error = await errorFromResponse(response);
      rateLimited++;
      const asked = serverRequestedWaitMs(response.headers, context.clock());
      const ms = asked ?? backoffMs(policy, rateLimited, context.random);
      if (rateLimited > policy.rateLimitRetries || ms > policy.maxWaitMs) {
        throw error instanceof RateLimitedError ? error : new RateLimitedError(429, error.code, error.message);
      }
      await wait(context, { why: 'rate-limited', ms, attempt: rateLimited, status: 429 }, signal);
      continue;
    }
    if (response.status >= 500) {
      const error = await errorFromResponse(response);
      failures++;
      const asked = response.status === 503 ? serverRequestedWaitMs(response.headers, context.clock()) : undefined;
      const ms = asked ?? backoffMs(policy, failures, context.random);
      if (failures > policy.serverRetries || ms > policy.maxWaitMs) throw error;
      await wait(context, { why: 'server-error', ms, attempt: failures, status: response.status }, signal);
      continue;
    }
    throw await errorFromResponse(response);
  }
}

async function wait(context: RetryContext, what: RetryWait, signal: AbortSignal | undefined): Promise<void> {
  context.onWait?.(what);
  await context.sleep(what.ms, signal);
}
