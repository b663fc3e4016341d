import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { Account, AccountStore } from '../../../src/accounts/index.js';
import { testClock } from '../../support/clock.js';
import { rejectsNadirError } from '../helpers.js';
import type { AccountSubject } from './subject.js';

const MONTH = '2025-03';

/** Usage: monthly counters and exactly-once billing. */
export function usageCases(subject: AccountSubject): void {
  describe('usage and exactly-once billing', () => {
    let store: AccountStore;
    let account: Account;

    beforeEach(async () => {
      store = await subject.fresh(testClock().now);
      account = await store.createAccount({ name: 'Acme', monthlyAllowance: 10 });
    });

    it('bills a token the first time only; later retrievals are free', async () => {
      assert.equal(await store.isTokenBilled('token-a'), false);
      assert.deepEqual(await store.recordTransaction('token-a', account.id, MONTH, 10), {
        billed: true,
        exceeded: false,
      });
      assert.equal(await store.isTokenBilled('token-a'), true);
      assert.deepEqual(await store.recordTransaction('token-a', account.id, MONTH, 10), {
        billed: false,
        exceeded: false,
      });
      // Even in a later month the token is not billed again.
      assert.deepEqual(await store.recordTransaction('token-a', account.id, '2025-04', 10), {
        billed: false,
        exceeded: false,
      });
      assert.deepEqual((await store.usage(account.id)).months, [{ month: MONTH, transactions: 1, tiles: 0 }]);
    });

    it('counts a token once when 50 callers race', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, () => store.recordTransaction('raced', account.id, MONTH, 10)),
      );
      assert.equal(results.filter((result) => result.billed).length, 1);
      assert.equal(results.filter((result) => result.exceeded).length, 0);
      assert.equal((await store.monthUsage(account.id, MONTH)).transactions, 1);
    });

    it('refuses, without counting, a new token once the allowance is used up', async () => {
      assert.equal((await store.recordTransaction('t1', account.id, MONTH, 2)).billed, true);
      assert.equal((await store.recordTransaction('t2', account.id, MONTH, 2)).billed, true);
      assert.deepEqual(await store.recordTransaction('t3', account.id, MONTH, 2), {
        billed: false,
        exceeded: true,
      });
      assert.equal(await store.isTokenBilled('t3'), false);
      assert.equal((await store.monthUsage(account.id, MONTH)).transactions, 2);

      // Already-billed tokens stay free when the month is full.
      assert.deepEqual(await store.recordTransaction('t1', account.id, MONTH, 2), {
        billed: false,
        exceeded: false,
      });
      // A new month starts from zero; a raised allowance lets the refused token through.
      assert.equal((await store.recordTransaction('t3', account.id, '2025-04', 2)).billed, true);
      assert.equal((await store.recordTransaction('t4', account.id, MONTH, 3)).billed, true);
      assert.equal((await store.recordTransaction('t5', account.id, MONTH, 0)).exceeded, true);
    });

    it('counts tiles in batches and reports months in order with zero defaults', async () => {
      await store.addTiles(account.id, '2025-02', 40);
      await store.addTiles(account.id, '2024-12', 5);
      await store.addTiles(account.id, '2025-02', 2);
      await store.addTiles(account.id, '2025-01', 0);
      await store.recordTransaction('t', account.id, '2025-02', 10);
      await store.recordTransaction('u', account.id, '2025-01', 10);
      assert.deepEqual(await store.usage(account.id), {
        accountId: account.id,
        months: [
          { month: '2024-12', transactions: 0, tiles: 5 },
          { month: '2025-01', transactions: 1, tiles: 0 },
          { month: '2025-02', transactions: 1, tiles: 42 },
        ],
      });
      assert.deepEqual(await store.monthUsage(account.id, '2030-07'), {
        month: '2030-07',
        transactions: 0,
        tiles: 0,
      });
    });

    it('keeps each account’s usage separate', async () => {
      const other = await store.createAccount({ name: 'Other' });
      await store.addTiles(other.id, MONTH, 3);
      await store.recordTransaction('other-token', other.id, MONTH, 10);
      assert.deepEqual((await store.usage(account.id)).months, []);
      assert.equal((await store.monthUsage(other.id, MONTH)).transactions, 1);
    });

    it('rejects bad arguments and unknown accounts cleanly', async () => {
      await rejectsNadirError(store.addTiles(account.id, '2025-13', 1), 'INVALID_PARAMETER');
      await rejectsNadirError(store.addTiles(account.id, '2025-3', 1), 'INVALID_PARAMETER');
      await rejectsNadirError(store.addTiles(account.id, MONTH, -1), 'INVALID_PARAMETER');
      await rejectsNadirError(store.recordTransaction('', account.id, MONTH, 1), 'INVALID_PARAMETER');
      await rejectsNadirError(store.recordTransaction('t', account.id, MONTH, -1), 'INVALID_PARAMETER');
      const missing = '00000000-0000-4000-8000-000000000000';
      await rejectsNadirError(store.addTiles(missing, MONTH, 1), 'ACCOUNT_NOT_FOUND');
      await rejectsNadirError(store.recordTransaction('t', missing, MONTH, 1), 'ACCOUNT_NOT_FOUND');
      await rejectsNadirError(store.monthUsage(missing, MONTH), 'ACCOUNT_NOT_FOUND');
      assert.equal(await store.isTokenBilled('t'), false);
    });
  });
}
