import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OnceATurn } from '../../src/cache/once-a-turn.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('OnceATurn', () => {
  it('reads once per turn of the event loop, and again in the next', async () => {
    let reads = 0;
    const value = new OnceATurn(() => ++reads);
    assert.deepEqual([value.get(), value.get()], [1, 1]);
    await Promise.resolve();
    assert.equal(value.get(), 1, 'a microtask later is the same turn');
    await nextTurn();
    assert.deepEqual([value.get(), value.get()], [2, 2]);
  });

  it('tries a read that threw again at the next ask', () => {
    let fail = true;
    const value = new OnceATurn(() => {
      if (fail) throw new Error('unreachable');
      return 'read';
    });
    assert.throws(() => value.get(), /unreachable/);
    fail = false;
    assert.equal(value.get(), 'read');
  });
});
