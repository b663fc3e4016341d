import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isNadirError, NadirError } from '../../src/errors.js';
import { AdmissionController, type Permit } from '../../src/raster/admission.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function controller(budget: number, maxWaitMs = 1000, maxQueuedCost = budget) {
  return new AdmissionController({ budget, maxWaitMs, maxQueuedCost });
}

async function assertOverloaded(promise: Promise<unknown>): Promise<number> {
  let retryAfter = -1;
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isNadirError(error));
    assert.equal(error.code, 'OVERLOADED');
    retryAfter = error.details.retryAfter as number;
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `retryAfter ${retryAfter}`);
    return true;
  });
  return retryAfter;
}

describe('AdmissionController', () => {
  it('admits work side by side while it fits the budget', async () => {
    const admission = controller(100);
    const permits = await Promise.all([admission.acquire(40), admission.acquire(60)]);
    assert.deepEqual([admission.stats.inFlight, admission.stats.inFlightCost, admission.stats.queued], [2, 100, 0]);
    for (const permit of permits) permit.release();
    assert.equal(admission.stats.inFlightCost, 0);
  });

  it('queues beyond the budget and admits in arrival order as work finishes', async () => {
    const admission = controller(100);
    const first = await admission.acquire(70);
    const order: string[] = [];
    const second = admission.acquire(50).then((p) => {
      order.push('second');
      return p;
    });
    // Fits the budget now, but arrived after `second`: FIFO keeps big requests from starving.
    const third = admission.acquire(20).then((p) => {
      order.push('third');
      return p;
    });
    await tick();
    assert.deepEqual(order, []);
    assert.deepEqual([admission.stats.queued, admission.stats.queuedCost], [2, 70]);
    first.release();
    const permits = await Promise.all([second, third]);
    assert.deepEqual(order, ['second', 'third']);
    assert.equal(admission.stats.inFlightCost, 70);
    for (const permit of permits) permit.release();
  });

  it('rejects with OVERLOADED and a Retry-After when the queue is full', async () => {
    const admission = controller(100, 1000, 50);
    const running = await admission.acquire(100);
    const waiting = admission.acquire(80); // the head may always wait, even beyond maxQueuedCost
    await assertOverloaded(admission.acquire(1));
    assert.equal(admission.stats.rejected, 1);
    running.release();
    (await waiting).release();
  });

  it('rejects at once when waiting is disabled', async () => {
    const admission = controller(100, 0);
    const running = await admission.acquire(80);
    await assertOverloaded(admission.acquire(30));
    (await admission.acquire(20)).release();
    running.release();
  });

  it('gives up on a request that waited too long, and keeps serving afterwards', async () => {
    const admission = controller(100, 30);
    const running = await admission.acquire(100);
    const started = Date.now();
    await assertOverloaded(admission.acquire(10));
    assert.ok(Date.now() - started >= 25, 'waited about maxWaitMs');
    assert.equal(admission.stats.queued, 0, 'the timed-out request left the queue');
    running.release();
    // Recovers: the next request runs.
    const next = await admission.acquire(100);
    next.release();
    assert.deepEqual([admission.stats.inFlight, admission.stats.admitted, admission.stats.rejected], [0, 2, 1]);
  });

  it('runs a request bigger than the whole budget, alone', async () => {
    const admission = controller(100);
    const small = await admission.acquire(10);
    let bigAdmitted = false;
    const big = admission.acquire(500).then((p) => {
      bigAdmitted = true;
      return p;
    });
    await tick();
    assert.equal(bigAdmitted, false, 'waits for the running work');
    small.release();
    const permit = await big;
    assert.equal(admission.stats.inFlightCost, 500);
    const behind = admission.acquire(1);
    await tick();
    assert.equal(admission.stats.queued, 1, 'nothing runs beside it');
    permit.release();
    (await behind).release();
  });

  it('drops an aborted request from the queue and lets the ones behind it in', async () => {
    const admission = controller(100, 5000, 1000);
    const running = await admission.acquire(60);
    const abort = new AbortController();
    const blocked = admission.acquire(80, abort.signal);
    const behind = admission.acquire(30);
    await tick();
    abort.abort(new Error('client went away'));
    await assert.rejects(blocked, /client went away/);
    const permit = await behind; // 60 + 30 fits once the 80 no longer blocks the head
    assert.equal(admission.stats.queued, 0);
    permit.release();
    running.release();
    assert.throws(() => abort.signal.throwIfAborted());
    await assert.rejects(admission.acquire(1, abort.signal), /client went away/);
  });

  it('releases exactly once, whatever the caller does', async () => {
    const admission = controller(100);
    const permit: Permit = await admission.acquire(50);
    permit.release();
    permit.release();
    assert.equal(admission.stats.inFlightCost, 0);
    assert.equal(admission.stats.inFlight, 0);
  });

  it('run() releases when the work throws', async () => {
    const admission = controller(100);
    await assert.rejects(
      admission.run(100, async () => {
        throw new NadirError('INTERNAL', 'boom');
      }),
      /boom/,
    );
    assert.equal(admission.stats.inFlightCost, 0);
    assert.equal(await admission.run(100, async () => 'ok'), 'ok');
  });

  it('estimates Retry-After from how fast finished work went, capped at a minute', async () => {
    const admission = controller(100, 0);
    // Teach it: 100 units took ~200 ms, so 2 ms per unit.
    await admission.run(100, () => new Promise((resolve) => setTimeout(resolve, 200)));
    const running = await admission.acquire(100);
    const retryAfter = await assertOverloaded(admission.acquire(100));
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `~0.4 s of work ahead -> ${retryAfter} s`);
    running.release();

    const slow = controller(1, 0);
    await slow.run(1, () => new Promise((resolve) => setTimeout(resolve, 1200)));
    const hold = await slow.acquire(1);
    assert.equal(await assertOverloaded(slow.acquire(1000)), 60, 'capped');
    hold.release();
  });

  it('refuses nonsense', async () => {
    assert.throws(() => controller(0));
    assert.throws(() => new AdmissionController({ budget: 1, maxWaitMs: -1, maxQueuedCost: 0 }));
    const admission = controller(10);
    for (const cost of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) await assert.rejects(admission.acquire(cost));
  });
});
