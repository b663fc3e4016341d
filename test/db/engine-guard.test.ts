/**
 * The engine guard's promises, on a monotonic clock the test moves: a hung call is a 503 after
 * the timeout, an unreachable engine a 503 at once, an open breaker refuses without calling, one
 * probe at a time after the open period, and the first success closes it. Mistakes in a call
 * (the engine answered) pass through and keep the breaker closed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineGuard } from '../../src/db/engine-guard.js';
import { isNadirError, NadirError } from '../../src/errors.js';

class Unreachable extends Error {
  code = 'ECONNREFUSED';
}

function guard(now: { ms: number }, events: string[] = []): EngineGuard {
  return new EngineGuard({
    engine: 'PostgreSQL',
    code: 'DATABASE_UNAVAILABLE',
    timeoutMs: 50,
    failuresToOpen: 2,
    openMs: 2_000,
    isUnavailable: (error) => error instanceof Unreachable,
    monotonic: () => now.ms,
    onOpen: () => events.push('open'),
    onClose: () => events.push('close'),
  });
}

async function refused(promise: Promise<unknown>): Promise<NadirError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isNadirError(error), `a NadirError, got ${String(error)}`);
    return error;
  }
  throw new Error('expected a refusal');
}

describe('EngineGuard', () => {
  test('a call that hangs is DATABASE_UNAVAILABLE with Retry-After once the timeout passes', async () => {
    const g = guard({ ms: 0 });
    const started = performance.now();
    const error = await refused(g.run(() => new Promise(() => {})));
    const waited = performance.now() - started;
    assert.equal(error.code, 'DATABASE_UNAVAILABLE');
    assert.match(error.message, /did not answer in time/);
    assert.ok(waited >= 45 && waited < 1_000, `waited ${waited} ms`);
    assert.equal(error.details.retryAfter, 2);
    assert.match(String((error.cause as Error).message), /within 50 ms/);
  });

  test('opens after failures in a row, refuses without calling, probes once, closes on success', async () => {
    const now = { ms: 0 };
    const events: string[] = [];
    const g = guard(now, events);
    const down = () => Promise.reject(new Unreachable('connect ECONNREFUSED'));
    assert.equal((await refused(g.run(down))).code, 'DATABASE_UNAVAILABLE');
    assert.equal(g.state, 'closed', 'one failure is not an outage');
    await refused(g.run(down));
    assert.equal(g.state, 'open');
    assert.deepEqual(events, ['open']);
    let called = 0;
    const counted = async () => {
      called++;
      return 'row';
    };
    now.ms = 1_500;
    const early = await refused(g.run(counted));
    assert.equal(called, 0, 'an open breaker does not call the engine');
    assert.equal(early.details.retryAfter, 1, 'half a second left of the open period');
    now.ms = 2_100;
    assert.equal(g.state, 'half-open');
    // One probe at a time: a second call while the probe is out is refused.
    let release: (value: string) => void = () => {};
    const probe = g.run(() => new Promise<string>((resolve) => (release = resolve)));
    await refused(g.run(counted));
    assert.equal(called, 0);
    release('row');
    assert.equal(await probe, 'row');
    assert.equal(g.state, 'closed');
    assert.deepEqual(events, ['open', 'close']);
    assert.equal(await g.run(counted), 'row');
    assert.equal(called, 1);
  });

  test('a failed probe opens it again for another period', async () => {
    const now = { ms: 0 };
    const g = guard(now);
    const down = () => Promise.reject(new Unreachable('reset'));
    await refused(g.run(down));
    await refused(g.run(down));
    now.ms = 2_500;
    await refused(g.run(down));
    assert.equal(g.state, 'open');
    now.ms = 4_000;
    assert.equal(g.state, 'open', 'the period restarts at the failed probe');
    now.ms = 4_600;
    assert.equal(g.state, 'half-open');
  });

  test("the engine's answer to a bad call passes through and keeps the breaker closed", async () => {
    const g = guard({ ms: 0 });
    const mistake = new NadirError('INVALID_PARAMETER', 'no such column');
    for (let i = 0; i < 5; i++) {
      await assert.rejects(
        g.run(() => Promise.reject(mistake)),
        (error) => error === mistake,
      );
    }
    assert.equal(g.state, 'closed');
  });
});
