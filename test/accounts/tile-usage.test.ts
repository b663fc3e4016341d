import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SqliteAccountStore } from '../../src/accounts/index.js';
import { TileUsageCounter } from '../../src/accounts/tile-usage.js';
import { testClock } from '../support/clock.js';

describe('TileUsageCounter', () => {
  it('writes counted tiles in one batch per account and month, only when flushed', async () => {
    const store = SqliteAccountStore.open(':memory:', { now: testClock().now });
    const account = await store.createAccount({ name: 'acme' });
    const writes: number[] = [];
    const addTiles = store.addTiles.bind(store);
    store.addTiles = async (id, month, count) => {
      writes.push(count);
      return addTiles(id, month, count);
    };
    const counter = new TileUsageCounter(store, 0);
    for (let i = 0; i < 250; i++) counter.count(account.id, '2026-11');
    counter.count(account.id, '2026-12', 5);
    assert.equal((await store.monthUsage(account.id, '2026-11')).tiles, 0, 'nothing written per tile');
    await counter.flush();
    assert.deepEqual(
      writes.sort((a, b) => a - b),
      [5, 250],
    );
    assert.equal((await store.monthUsage(account.id, '2026-11')).tiles, 250);
    counter.count(account.id, '2026-11', 2);
    await counter.close();
    assert.equal((await store.monthUsage(account.id, '2026-11')).tiles, 252, 'close() flushes');
    await store.close();
  });

  it('keeps counts whose write failed for the next flush', async () => {
    const store = SqliteAccountStore.open(':memory:', { now: testClock().now });
    const account = await store.createAccount({ name: 'acme' });
    const addTiles = store.addTiles.bind(store);
    let fail = true;
    store.addTiles = async (id, month, count) => {
      if (fail) throw new Error('disk full');
      return addTiles(id, month, count);
    };
    const counter = new TileUsageCounter(store, 0);
    counter.count(account.id, '2026-11', 7);
    await assert.rejects(counter.flush(), /disk full/);
    fail = false;
    counter.count(account.id, '2026-11', 1);
    await counter.flush();
    assert.equal((await store.monthUsage(account.id, '2026-11')).tiles, 8);
    await store.close();
  });
});
