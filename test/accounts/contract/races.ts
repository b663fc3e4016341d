import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testClock } from '../../support/clock.js';
import type { AccountSubject } from './subject.js';

const MONTH = '2026-11';

/**
 * Billing raced from two servers at once (two connections to one database): what makes billing
 * exactly-once must be in the database, not in one process's memory.
 */
export function raceCases(subject: AccountSubject): void {
  describe('billing raced from two servers', () => {
    it('50 concurrent first retrievals of one token count one transaction', async () => {
      const one = await subject.fresh(testClock().now);
      const two = await subject.another(one, testClock().now);
      const account = await one.createAccount({ name: 'Acme', monthlyAllowance: 100 });
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? one : two).recordTransaction('the-token', account.id, MONTH, 100),
        ),
      );
      assert.equal(results.filter((r) => r.billed).length, 1);
      assert.equal(results.filter((r) => r.exceeded).length, 0);
      assert.equal((await two.monthUsage(account.id, MONTH)).transactions, 1);
    });

    it('the monthly allowance holds exactly: 40 tokens raced against an allowance of 10', async () => {
      const one = await subject.fresh(testClock().now);
      const two = await subject.another(one, testClock().now);
      const account = await one.createAccount({ name: 'Acme', monthlyAllowance: 10 });
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? one : two).recordTransaction(`token-${i}`, account.id, MONTH, 10),
        ),
      );
      assert.equal(results.filter((r) => r.billed).length, 10);
      assert.equal(results.filter((r) => r.exceeded).length, 30);
      assert.equal((await one.monthUsage(account.id, MONTH)).transactions, 10);
    });

    it('tile counts flushed by two servers at once add up', async () => {
      const one = await subject.fresh(testClock().now);
      const two = await subject.another(one, testClock().now);
      const account = await one.createAccount({ name: 'Acme' });
      await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? one : two).addTiles(account.id, MONTH, i + 1)));
      assert.equal((await two.monthUsage(account.id, MONTH)).tiles, (60 * 61) / 2);
    });
  });
}
