import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type NadirApiError, NadirNetworkError, RateLimitedError } from '../src/errors.js';
import { backoffMs, DEFAULT_RETRY_POLICY, sendWithRetry, serverRequestedWaitMs } from '../src/retry.js';
import { apiError, fakeTime } from './fake-fetch.js';

function context(time = fakeTime(), random = () => 0.5) {
  return { policy: DEFAULT_RETRY_POLICY, clock: time.clock, sleep: time.sleep, random };
}

describe('sendWithRetry', () => {
  test('a 429 is waited out for Retry-After seconds, then the answer is returned', async () => {
    const time = fakeTime();
    const answers = [apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '7' }), new Response('ok')];
    const response = await sendWithRetry(async () => answers.shift() as Response, context(time));
    assert.equal(await response.text(), 'ok');
    assert.deepEqual(time.waits, [7000]);
  });

  test('without Retry-After, a 429 waits until X-RateLimit-Reset', async () => {
    const time = fakeTime(1_000_000_000_000);
    const reset = String(1_000_000_000 + 12);
    const answers = [apiError(429, 'RATE_LIMITED', {}, { 'x-ratelimit-reset': reset }), new Response('ok')];
    await sendWithRetry(async () => answers.shift() as Response, context(time));
    assert.deepEqual(time.waits, [12_000]);
  });

  test('5xx are retried after jittered, doubling backoffs, then thrown with their code', async () => {
    const time = fakeTime();
    let calls = 0;
    const send = async () => {
      calls++;
      return apiError(500, 'INTERNAL');
    };
    await assert.rejects(
      sendWithRetry(
        send,
        context(time, () => 0.5),
      ),
      (error: NadirApiError) => {
        assert.equal(error.code, 'INTERNAL');
        assert.equal(error.status, 500);
        return true;
      },
    );
    assert.equal(calls, DEFAULT_RETRY_POLICY.serverRetries + 1);
    assert.deepEqual(time.waits, [125, 250, 500, 1000]);
  });

  test('jitter spreads the wait over [0, cap]', () => {
    assert.equal(
      backoffMs(DEFAULT_RETRY_POLICY, 3, () => 0),
      0,
    );
    assert.equal(
      backoffMs(DEFAULT_RETRY_POLICY, 3, () => 0.999999),
      1000,
    );
    assert.equal(
      backoffMs(DEFAULT_RETRY_POLICY, 30, () => 0.999999),
      DEFAULT_RETRY_POLICY.maxBackoffMs,
    );
  });

  test('a 503 with Retry-After waits what the server asks', async () => {
    const time = fakeTime();
    const answers = [apiError(503, 'OVERLOADED', {}, { 'retry-after': '2' }), new Response('ok')];
    await sendWithRetry(async () => answers.shift() as Response, context(time));
    assert.deepEqual(time.waits, [2000]);
  });

  test('a 4xx other than 429 is thrown at once, typed, with its code and parameter', async () => {
    let calls = 0;
    const send = async () => {
      calls++;
      return apiError(400, 'INVALID_PARAMETER', { parameter: 'radius' });
    };
    await assert.rejects(sendWithRetry(send, context()), {
      code: 'INVALID_PARAMETER',
      parameter: 'radius',
      status: 400,
    });
    assert.equal(calls, 1);
  });

  test('429s beyond the retries are a RateLimitedError', async () => {
    const policy = { ...DEFAULT_RETRY_POLICY, rateLimitRetries: 2 };
    const time = fakeTime();
    const send = async () => apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '1' });
    await assert.rejects(sendWithRetry(send, { ...context(time), policy }), RateLimitedError);
    assert.deepEqual(time.waits, [1000, 1000]);
  });

  test('a 429 asking for longer than maxWaitMs is thrown instead of waited', async () => {
    const time = fakeTime();
    const send = async () => apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '3600' });
    await assert.rejects(sendWithRetry(send, context(time)), RateLimitedError);
    assert.deepEqual(time.waits, []);
  });

  test('no answer at all is retried, then a NadirNetworkError', async () => {
    const time = fakeTime();
    const send = async () => {
      throw new TypeError('fetch failed');
    };
    await assert.rejects(sendWithRetry(send, context(time)), NadirNetworkError);
    assert.equal(time.waits.length, DEFAULT_RETRY_POLICY.serverRetries);
  });

  test('an abort ends a wait at once, with the signal reason, and nothing more is sent', async () => {
    const controller = new AbortController();
    let calls = 0;
    const send = async () => {
      calls++;
      return apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '60' });
    };
    // A real timer sleep: the abort must cut a 60 s wait short.
    const { timerSleep } = await import('../src/waiting.js');
    const started = performance.now();
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await assert.rejects(
      sendWithRetry(send, { ...context(), sleep: timerSleep }, controller.signal),
      (error: Error) => error.message === 'stop',
    );
    assert.ok(performance.now() - started < 2000);
    assert.equal(calls, 1);
  });

  test('Retry-After as an HTTP date, and nonsense ignored', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    const headers = new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' });
    assert.equal(serverRequestedWaitMs(headers, now), 30_000);
    assert.equal(serverRequestedWaitMs(new Headers({ 'retry-after': 'soon' }), now), undefined);
  });
});
